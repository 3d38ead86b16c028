import Foundation
import KeychainClient
import KeychainKeys
import KeychainModel

/// `kSecReturnRef` for keys, certificates and identities: the daemon returns the item's
/// bytes and attributes, and the caller gets a `SecKey`, a `SecCertificate` or a
/// `SecIdentity` made from them (SecItem.m builds refs the same way, from `v_Data` and the
/// attributes), alone or as `kSecValueRef` in the result dictionary. An identity's private
/// key is read with a second request, by the certificate's public-key hash.
struct ItemReferences {
    private enum Kind {
        case key, certificate, identity
    }

    /// The query sent to the daemon: with data and attributes asked for when a ref is.
    let query: [String: KeychainValue]
    private let asked: (data: Bool, attributes: Bool, persistentRef: Bool)?
    private let kind: Kind?

    /// `kSecUseAuthenticationContext`: an enclave key returned by reference uses it.
    private let context: AuthenticationContext?

    init(_ query: [String: KeychainValue], context: AuthenticationContext? = nil) {
        self.context = context
        let kind: Kind? =
            switch query[QueryKey.itemClass] {
            case .string(SecName.kSecClassKey)?: .key
            case .string(SecName.kSecClassCertificate)?: .certificate
            case .string(SecName.kSecClassIdentity)?: .identity
            default: nil
            }
        guard query[QueryKey.returnRef] == .bool(true), let kind else {
            self.query = query
            asked = nil
            self.kind = nil
            return
        }
        self.kind = kind
        asked = (query[QueryKey.returnData] == .bool(true), query[QueryKey.returnAttributes] == .bool(true), query[QueryKey.returnPersistentRef] == .bool(true))
        var widened = query
        widened[QueryKey.returnData] = .bool(true)
        widened[QueryKey.returnAttributes] = .bool(true)
        self.query = widened
    }

    /// The result as Apple returns it: refs where they were asked for.
    func object(_ value: KeychainValue, keychain: Keychain) throws(KeychainError) -> AnyObject {
        guard let asked else { return FoundationBridge.object(value) }
        switch value {
        case .array(let items):
            var objects: [AnyObject] = []
            for item in items { objects.append(try object(item, keychain: keychain)) }
            return NSArray(array: objects)
        case .dictionary(var item):
            let reference = try reference(item, keychain: keychain)
            if !asked.data && !asked.attributes && !asked.persistentRef { return reference }
            if !asked.data { item[QueryKey.valueData] = nil }
            if !asked.attributes { item = item.filter { [QueryKey.valueData, QueryKey.valuePersistentRef].contains($0.key) } }
            let dictionary = NSMutableDictionary()
            for (name, value) in item { dictionary[name] = FoundationBridge.object(value) }
            dictionary[QueryKey.valueRef] = reference
            return dictionary
        default:
            return FoundationBridge.object(value)
        }
    }

    /// The key, certificate or identity an item holds.
    private func reference(_ item: [String: KeychainValue], keychain: Keychain) throws(KeychainError) -> AnyObject {
        guard case .data(let bytes)? = item[QueryKey.valueData] else { throw KeychainError.decode("the item holds no data") }
        switch kind {
        case .key?:
            return try Self.key(item, bytes: bytes, context: context)
        case .identity?:
            guard let label = item[SecName.kSecAttrApplicationLabel] else { throw KeychainError.decode("the identity has no key label") }
            var keyQuery: [String: KeychainValue] = [
                QueryKey.itemClass: .string(SecName.kSecClassKey), SecName.kSecAttrApplicationLabel: label,
                SecName.kSecAttrKeyClass: .string(SecName.kSecAttrKeyClassPrivate), QueryKey.returnData: .bool(true),
                QueryKey.returnAttributes: .bool(true),
            ]
            if let group = item[SecName.kSecAttrAccessGroup] { keyQuery[SecName.kSecAttrAccessGroup] = group }
            // The key is looked for in the keychains the identity was (macOS: kSecMatchSearchList).
            if let keychains = query[QueryKey.matchSearchList] { keyQuery[QueryKey.matchSearchList] = keychains }
            if case .string(let keychain)? = query[QueryKey.useKeychain] { keyQuery[QueryKey.matchSearchList] = .array([.string(keychain)]) }
            guard case .dictionary(let keyItem)? = try keychain.copyMatching(keyQuery), case .data(let keyBytes)? = keyItem[QueryKey.valueData] else {
                throw KeychainError.itemNotFound
            }
            return SecIdentity(certificate: NSData(data: bytes), privateKey: try Self.key(keyItem, bytes: keyBytes, context: context))
        case .certificate?, nil:
            return NSData(data: bytes)  // a SecCertificate is its DER
        }
    }

    private static func key(_ item: [String: KeychainValue], bytes: Data, context: AuthenticationContext?) throws(KeychainError) -> SecKey {
        if item[SecName.kSecAttrTokenID] == .string(EnclaveKeyBlob.tokenID) {
            return try SecKey(enclave: EnclaveKeyBlob(data: bytes), context: context)
        }
        guard let type = text(item[SecName.kSecAttrKeyType]).flatMap(AsymmetricKey.KeyType.init(attributeValue:)),
            let keyClass = text(item[SecName.kSecAttrKeyClass]).flatMap(AsymmetricKey.KeyClass.init(attributeValue:))
        else { throw KeychainError.decode("the key item holds no key of a known type") }
        return SecKey(try AsymmetricKey(externalRepresentation: bytes, type: type, keyClass: keyClass))
    }

    /// Key type and class as the store returns them: Apple's numbers, or their strings.
    private static func text(_ value: KeychainValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .number(let number)?: String(number)
        default: nil
        }
    }
}
