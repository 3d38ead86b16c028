import Foundation
import KeychainKeys
import KeychainModel

/// Reading the parameter dictionaries of the SecKey functions as Apple reads them.
enum KeyParameters {
    /// `kSecAttrKeyType` given as Apple's string ("73") or as a number.
    static func keyType(_ value: Any?) -> AsymmetricKey.KeyType? {
        text(value).flatMap(AsymmetricKey.KeyType.init(attributeValue:))
    }

    /// `kSecAttrKeyClass` given as Apple's string ("1") or as a number.
    static func keyClass(_ value: Any?) -> AsymmetricKey.KeyClass? {
        text(value).flatMap(AsymmetricKey.KeyClass.init(attributeValue:))
    }

    /// A number given as a number or a decimal string (`SecKeyParamsAsInt64`).
    static func integer(_ value: Any?) -> Int? {
        switch value {
        case let number as NSNumber: number.intValue
        case let string as String: Int(string)
        default: nil
        }
    }

    private static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    /// One half's attributes as `merge_params` makes them: its own dictionary
    /// (`kSecPrivateKeyAttrs` / `kSecPublicKeyAttrs`) with the top level's other entries
    /// added where it has none, without the generation parameters.
    static func merged(_ parameters: CFDictionary, half: String) -> [String: Any] {
        var result: [String: Any] = [:]
        if let own = parameters[half] as? NSDictionary {
            for case (let key as String, let value) in own { result[key] = value }
        }
        for case (let key as String, let value) in parameters where result[key] == nil { result[key] = value }
        for key in [kSecPublicKeyAttrs, kSecPrivateKeyAttrs, kSecAttrKeyType, kSecAttrKeySizeInBits] {
            result[key as String] = nil
        }
        return result
    }

    /// Whether a half's attributes ask for it to be stored (`kSecAttrIsPermanent`, default false).
    static func isPermanent(_ attributes: [String: Any]) -> Bool {
        (attributes[kSecAttrIsPermanent as String] as? NSNumber)?.boolValue ?? false
    }

    /// Stores `key` with `attributes` as `add_key` does: `SecItemAdd` of the attributes and
    /// the key as `kSecValueRef`.
    static func store(_ key: SecKey, attributes: [String: Any]) throws(KeychainError) {
        var item = attributes
        item[kSecClass as String] = kSecClassKey
        item[kSecValueRef as String] = key
        item[kSecAttrIsPermanent as String] = nil
        let status = SecItemAdd(NSDictionary(dictionary: item), nil)
        guard status == errSecSuccess else {
            throw KeychainError(status: OSStatusCode(rawValue: status), message: "failed to add key to keychain: \(key)")
        }
    }
}

extension KeychainError {
    /// Sets an `Unmanaged<CFError>` out-parameter, as the Security functions do: an
    /// `NSOSStatusErrorDomain` error with the status as its code and the message as its
    /// description.
    func report(to pointer: UnsafeMutablePointer<Unmanaged<CFError>?>?) {
        pointer?.pointee = Unmanaged.passRetained(
            NSError(domain: NSOSStatusErrorDomain, code: Int(status.rawValue), userInfo: [NSLocalizedDescriptionKey: message]))
    }
}
