import Foundation
import KeychainModel

/// Converts between the Foundation objects of Apple-style queries and results and the
/// keychain's own values.
enum FoundationBridge {
    /// A query dictionary's entries as keychain values.
    ///
    /// - Throws: `errSecParam` for a key that is not a string or a value of a type no
    ///   keychain attribute has.
    static func query(_ dictionary: CFDictionary) throws(KeychainError) -> [String: KeychainValue] {
        var query: [String: KeychainValue] = [:]
        var accessControl: AnyObject?
        for (key, value) in dictionary {
            guard let key = key as? String else {
                throw KeychainError(status: OSStatusCode.param, message: "a query key is not a string")
            }
            if key == accessControlKey {
                accessControl = value as AnyObject
            } else {
                query[key] = try keychainValue(value as AnyObject, key: key)
            }
        }
        if let accessControl { try apply(accessControl, to: &query) }
        return query
    }

    /// `kSecAttrAccessControl`, which is a SecAccessControl rather than a property-list value.
    private static let accessControlKey = "accc"

    /// `kSecAttrAccessControl`: its protection class becomes the item's. Constraints that need
    /// the user are not enforced yet, so an item asking for them is refused rather than
    /// stored unprotected.
    private static func apply(_ object: AnyObject, to query: inout [String: KeychainValue]) throws(KeychainError) {
        guard let access = object as? SecAccessControl else {
            throw KeychainError(status: OSStatusCode.param, message: "the value of accc is not a SecAccessControl")
        }
        if query[ItemSchema.Name.synchronizable]?.boolValue == true {
            throw KeychainError(status: OSStatusCode.param, message: "a synchronizable item cannot have an access control")
        }
        guard !access.requiresAuthentication else {
            throw KeychainError(
                status: OSStatusCode.unimplemented,
                message: "access controls that need user presence, biometry or an application password are not enforced yet")
        }
        let protection = KeychainValue.string(access.protection.rawValue)
        if let given = query[ItemSchema.Name.accessible], given != protection {
            throw KeychainError(status: OSStatusCode.param, message: "kSecAttrAccessible and kSecAttrAccessControl disagree")
        }
        query[ItemSchema.Name.accessible] = protection
    }

    static func keychainValue(_ object: AnyObject, key: String) throws(KeychainError) -> KeychainValue {
        switch object {
        case let number as NSNumber:
            // Booleans bridge to NSNumber too; their encoding is "c" (CFBoolean on Apple's side).
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            return .number(number.int64Value)
        case let string as String:
            return .string(string)
        case let data as Data:
            return .data(data)
        case let date as Date:
            return .date(date)
        case let array as [AnyObject]:
            var values: [KeychainValue] = []
            for element in array { values.append(try keychainValue(element, key: key)) }
            return .array(values)
        case let dictionary as NSDictionary:
            return .dictionary(try query(dictionary))
        default:
            throw KeychainError(status: OSStatusCode.param, message: "the value of \(key) is a \(type(of: object)), which no keychain attribute takes")
        }
    }

    /// A result as the Foundation object Apple returns: NSData, NSDictionary (string keys),
    /// NSArray, NSString, NSNumber or NSDate.
    static func object(_ value: KeychainValue) -> AnyObject {
        switch value {
        case .string(let string): NSString(string: string)
        case .data(let data): NSData(data: data)
        case .number(let number): NSNumber(value: number)
        case .bool(let bool): NSNumber(value: bool)
        case .date(let date): NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case .array(let array): NSArray(array: array.map(object))
        case .dictionary(let dictionary):
            NSDictionary(dictionary: Dictionary(uniqueKeysWithValues: dictionary.map { ($0.key, object($0.value)) }))
        }
    }
}
