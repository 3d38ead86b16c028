import Foundation

/// The Core Foundation type identifiers of the objects the Security functions return
/// (`CFGetTypeID` compares them with `SecKeyGetTypeID()` and the like).
enum CoreFoundationType: CFTypeID {
    case other = 0
    case string = 7
    case dictionary = 18
    case array = 19
    case data = 20
    case number = 22
    case boolean = 21
    case date = 42
    case secKey = 300
    case secAccessControl = 301
    case secIdentity = 302
    case secPolicy = 303
    case secTrust = 304
    case secKeychain = 305
}

public typealias CFTypeID = UInt

/// The type identifier of a Core Foundation object (`CFGetTypeID`).
public func CFGetTypeID(_ object: CFTypeRef?) -> CFTypeID {
    let type: CoreFoundationType =
        switch object {
        case is SecKey: .secKey
        case is SecAccessControl: .secAccessControl
        case is SecIdentity: .secIdentity
        case is SecPolicy: .secPolicy
        case is SecTrust: .secTrust
        case is SecKeychain: .secKeychain
        case is NSString: .string
        case is NSDictionary: .dictionary
        case is NSArray: .array
        case is NSData: .data
        case let number as NSNumber: String(cString: number.objCType) == "c" ? .boolean : .number
        case is NSDate: .date
        default: .other
        }
    return type.rawValue
}

public func CFStringGetTypeID() -> CFTypeID { CoreFoundationType.string.rawValue }
public func CFDictionaryGetTypeID() -> CFTypeID { CoreFoundationType.dictionary.rawValue }
public func CFArrayGetTypeID() -> CFTypeID { CoreFoundationType.array.rawValue }
public func CFDataGetTypeID() -> CFTypeID { CoreFoundationType.data.rawValue }
public func CFNumberGetTypeID() -> CFTypeID { CoreFoundationType.number.rawValue }
public func CFBooleanGetTypeID() -> CFTypeID { CoreFoundationType.boolean.rawValue }
public func SecAccessControlGetTypeID() -> CFTypeID { CoreFoundationType.secAccessControl.rawValue }
