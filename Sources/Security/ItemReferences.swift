import Foundation
import KeychainKeys
import KeychainModel

/// `kSecReturnRef` for keys and certificates: the daemon returns the item's bytes and
/// attributes, and the caller gets a `SecKey` or a `SecCertificate` made from them (SecItem.m
/// builds refs the same way, from `v_Data` and the attributes), alone or as `kSecValueRef`
/// in the result dictionary.
struct ItemReferences {
    /// The query sent to the daemon: with data and attributes asked for when a key ref is.
    let query: [String: KeychainValue]
    private let asked: (data: Bool, attributes: Bool, persistentRef: Bool)?
    private let isKey: Bool

    init(_ query: [String: KeychainValue]) {
        guard query[QueryKey.returnRef] == .bool(true),
            [.string(SecName.kSecClassKey), .string(SecName.kSecClassCertificate)].contains(query[QueryKey.itemClass])
        else {
            self.query = query
            asked = nil
            isKey = false
            return
        }
        isKey = query[QueryKey.itemClass] == .string(SecName.kSecClassKey)
        asked = (query[QueryKey.returnData] == .bool(true), query[QueryKey.returnAttributes] == .bool(true), query[QueryKey.returnPersistentRef] == .bool(true))
        var widened = query
        widened[QueryKey.returnData] = .bool(true)
        widened[QueryKey.returnAttributes] = .bool(true)
        self.query = widened
    }

    /// The result as Apple returns it: keys as `SecKey` where a ref was asked for.
    func object(_ value: KeychainValue) throws(KeychainError) -> AnyObject {
        guard let asked else { return FoundationBridge.object(value) }
        switch value {
        case .array(let items):
            var objects: [AnyObject] = []
            for item in items { objects.append(try object(item)) }
            return NSArray(array: objects)
        case .dictionary(var item):
            let reference = try reference(item)
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

    /// The key or certificate an item holds.
    private func reference(_ item: [String: KeychainValue]) throws(KeychainError) -> AnyObject {
        guard case .data(let bytes)? = item[QueryKey.valueData] else { throw KeychainError.decode("the item holds no data") }
        guard isKey else { return NSData(data: bytes) }  // a SecCertificate is its DER
        guard
            let type = Self.text(item[SecName.kSecAttrKeyType]).flatMap(AsymmetricKey.KeyType.init(attributeValue:)),
            let keyClass = Self.text(item[SecName.kSecAttrKeyClass]).flatMap(AsymmetricKey.KeyClass.init(attributeValue:))
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
