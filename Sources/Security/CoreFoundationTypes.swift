@_exported import Foundation

// Core Foundation's names as keychain code uses them on Apple platforms, declared as the
// Foundation classes they bridge to there, so that `query as CFDictionary`,
// `kSecClass as String`, `String(kSecAttrAccount)` and `item as? Data` compile unchanged.
// (swift-corelibs-foundation has no toll-free bridging to its own CoreFoundation types.)

/// Any Core Foundation object.
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFMutableDictionary = NSMutableDictionary
public typealias CFArray = NSArray
public typealias CFData = NSData
public typealias CFDate = NSDate
public typealias CFNumber = NSNumber
public typealias CFBoolean = NSNumber
public typealias CFError = NSError
public typealias CFAllocator = AnyObject
public typealias CFIndex = Int
public typealias CFOptionFlags = UInt
public typealias CFErrorDomain = CFString
/// Apple's result code of Security functions.
public typealias OSStatus = Int32

/// A string object hashes as the `String` it holds, as on Apple platforms, where
/// `AnyHashable(kSecAttrAccount)` equals `AnyHashable("acct")`: results read as
/// `[AnyHashable: Any]` and looked up by `kSec…` constants (SwiftKeychainWrapper's
/// `allKeys`), and query dictionaries compared as `AnyHashable` (SimpleKeychain's tests),
/// then behave as there. swift-corelibs-foundation does not do it itself; the `kSec…`
/// constants must stay `NSString` (`CFString`) for `as CFDictionary` and `as String` to
/// compile unchanged, so the object type is taught what its Apple counterpart knows.
extension NSString: @retroactive _HasCustomAnyHashableRepresentation {
    public func _toCustomAnyHashable() -> AnyHashable? {
        AnyHashable(String(self))
    }
}

/// Implicitly unwrapped, as on Apple platforms, where code writes `kCFBooleanTrue!`.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
/// The default allocator: Security functions accept it and ignore it.
nonisolated(unsafe) public let kCFAllocatorDefault: CFAllocator? = nil

public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool {
    boolean.boolValue
}

public func CFErrorGetCode(_ error: CFError!) -> CFIndex {
    error.code
}

public func CFErrorGetDomain(_ error: CFError!) -> CFErrorDomain! {
    NSString(string: error.domain)
}

public func CFErrorCopyDescription(_ error: CFError!) -> CFString! {
    NSString(string: error.localizedDescription)
}

/// The error's user-info dictionary (`CFErrorCopyUserInfo`): KeychainAccess reads it.
public func CFErrorCopyUserInfo(_ error: CFError!) -> CFDictionary! {
    NSDictionary(dictionary: error.userInfo)
}
