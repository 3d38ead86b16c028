import Foundation
import KeychainClient
import KeychainCertificates
import KeychainKeys
import KeychainModel

/// Converts between the Foundation objects of Apple-style queries and results and the
/// keychain's own values.
enum FoundationBridge {
    /// A query dictionary's entries as keychain values.
    ///
    /// - Throws: `errSecParam` for a key that is not a string or a value of a type no
    ///   keychain attribute has.
    static func query(_ dictionary: CFDictionary) throws(KeychainError) -> [String: KeychainValue] {
        try request(dictionary, forAdd: false).query
    }

    /// A query dictionary's entries as keychain values, and its `kSecUseAuthenticationContext`.
    /// A `kSecValueRef` adds what its key or certificate implies: every derived attribute
    /// and its bytes to an item being added (`forAdd`), its primary key to a search.
    static func request(_ dictionary: CFDictionary, forAdd: Bool) throws(KeychainError) -> (query: [String: KeychainValue], context: AuthenticationContext?) {
        var query: [String: KeychainValue] = [:]
        var context: AuthenticationContext?
        var reference: AnyObject?
        for (key, value) in dictionary {
            guard let key = key as? String else {
                throw KeychainError(status: OSStatusCode.param, message: "a query key is not a string")
            }
            switch key {
            case QueryKey.accessControl:
                guard let access = value as? SecAccessControl else {
                    throw KeychainError(status: OSStatusCode.param, message: "the value of accc is not a SecAccessControl")
                }
                query[key] = .data(access.accessControl.encoded)
            case QueryKey.authenticationContext:
                guard let provider = value as? any AuthenticationContextProviding else {
                    throw KeychainError(status: OSStatusCode.param, message: "the value of u_AuthCtx is not an LAContext")
                }
                context = provider.authenticationContext
            case QueryKey.valueRef:
                reference = value as AnyObject
            default:
                query[key] = try keychainValue(value as AnyObject, key: key)
            }
        }
        // A key or certificate given as kSecValueRef adds the attributes it implies and its
        // bytes; the caller's attributes win (SecItem.m, "add only those attributes … which
        // are missing").
        if let reference {
            var implied = try referenceAttributes(reference)
            if let itemClass = query[QueryKey.itemClass], itemClass != implied[QueryKey.itemClass] {
                throw KeychainError.param("kSecValueRef is not an item of the query's class")
            }
            if !forAdd {
                // A search by reference looks for the item by what identifies it (SecItem.m
                // filters a ref's attributes "forQuery").
                let identifying: Set = [
                    QueryKey.itemClass, SecName.kSecAttrKeyClass, SecName.kSecAttrApplicationLabel, SecName.kSecAttrKeyType,
                    SecName.kSecAttrKeySizeInBits, SecName.kSecAttrCertificateType, SecName.kSecAttrIssuer, SecName.kSecAttrSerialNumber,
                ]
                implied = implied.filter { identifying.contains($0.key) }
            }
            for (name, value) in implied where query[name] == nil { query[name] = value }
        }
        return (query, context)
    }

    /// What a `kSecValueRef` stands for: a `SecKey`'s attributes and bytes, or a
    /// `SecCertificate`'s (its DER data).
    private static func referenceAttributes(_ reference: AnyObject) throws(KeychainError) -> [String: KeychainValue] {
        switch reference {
        case let key as SecKey:
            return key.itemAttributes
        case let data as NSData:
            guard let certificate = try? CertificateFields(der: Array(data as Data)) else {
                throw KeychainError.param("the value of v_Ref is not a certificate")
            }
            return certificate.itemAttributes
        default:
            throw KeychainError.param("the value of v_Ref is a \(type(of: reference)), not a SecKey or a SecCertificate")
        }
    }

    static func keychainValue(_ object: AnyObject, key: String) throws(KeychainError) -> KeychainValue {
        switch object {
        case let number as NSNumber:
            // Booleans bridge to NSNumber too; their encoding is "c" (CFBoolean on Apple's side).
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            return .number(number.int64Value)
        case let string as String:
            return .string(string)
        case let keychain as SecKeychain:
            return .string(keychain.path)  // kSecUseKeychain, kSecMatchSearchList: securityd routes by path
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
