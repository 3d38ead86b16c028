import Foundation
import KeychainKeys
import KeychainModel

/// `kSecReturnRef` for keys: the daemon returns a key item's bytes and attributes, and the
/// caller gets a `SecKey` made from them (SecItem.m builds refs the same way, from `v_Data`
/// and the attributes), alone or as `kSecValueRef` in the result dictionary.
struct KeyReferences {
    /// The query sent to the daemon: with data and attributes asked for when a key ref is.
    let query: [String: KeychainValue]
    private let asked: (data: Bool, attributes: Bool, persistentRef: Bool)?

    init(_ query: [String: KeychainValue]) {
        guard query[QueryKey.itemClass] == .string(SecName.kSecClassKey), query[QueryKey.returnRef] == .bool(true) else {
            self.query = query
            asked = nil
            return
        }
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
            let key = try Self.key(item)
            if !asked.data && !asked.attributes && !asked.persistentRef { return key }
            if !asked.data { item[QueryKey.valueData] = nil }
            if !asked.attributes { item = item.filter { [QueryKey.valueData, QueryKey.valuePersistentRef].contains($0.key) } }
            let dictionary = NSMutableDictionary()
            for (name, value) in item { dictionary[name] = FoundationBridge.object(value) }
            dictionary[QueryKey.valueRef] = key
            return dictionary
        default:
            return FoundationBridge.object(value)
        }
    }

    /// The key a key item holds.
    private static func key(_ item: [String: KeychainValue]) throws(KeychainError) -> SecKey {
        guard case .data(let bytes)? = item[QueryKey.valueData],
            let type = text(item[SecName.kSecAttrKeyType]).flatMap(AsymmetricKey.KeyType.init(attributeValue:)),
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
