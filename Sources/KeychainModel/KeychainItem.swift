import FoundationEssentials

/// One decrypted item as the store hands it to result shaping.
public struct KeychainItem: Sendable {
    public var itemClass: ItemClass
    /// Catalogue attributes (not agrp, pdmn, sync, tomb).
    public var attributes: [String: KeychainValue]
    public var accessGroup: String
    public var protection: ProtectionClass
    public var synchronizable: Bool
    public var tombstone: Bool
    public var persistentReference: PersistentReference
    /// The secret (`v_Data`); nil when the item has none or it was not asked for.
    public var data: SecretBytes?
    /// `kSecAttrAccessControl`; read with the secret (nil when that was not opened).
    public var accessControl: AccessControl?

    public init(
        itemClass: ItemClass, attributes: [String: KeychainValue], accessGroup: String,
        protection: ProtectionClass, synchronizable: Bool, tombstone: Bool,
        persistentReference: PersistentReference, data: SecretBytes?
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.accessGroup = accessGroup
        self.protection = protection
        self.synchronizable = synchronizable
        self.tombstone = tombstone
        self.persistentReference = persistentReference
        self.data = data
    }

    /// How many attributes ``attributeDictionary`` adds to ``attributes`` at most (the
    /// class and the plaintext columns'): a decoder that reserves room for them spares the
    /// copy a rehash.
    public static let columnAttributeCount = 5

    /// The attribute dictionary Apple returns for `kSecReturnAttributes`: the class, every
    /// stored attribute and the plaintext-column ones, never `v_Data`.
    public var attributeDictionary: [String: KeychainValue] {
        var result = attributes
        result[QueryKey.itemClass] = .string(itemClass.rawValue)
        result[ItemSchema.Name.accessGroup] = .string(accessGroup)
        result[ItemSchema.Name.accessible] = .string(protection.rawValue)
        result[ItemSchema.Name.synchronizable] = .bool(synchronizable)
        if tombstone { result[ItemSchema.Name.tombstone] = .bool(true) }
        return result
    }

    /// Whether this item's value for `name` (catalogue or plaintext column) equals `value`.
    public func value(of name: String) -> KeychainValue? {
        switch name {
        case ItemSchema.Name.accessGroup: .string(accessGroup)
        case ItemSchema.Name.accessible: .string(protection.rawValue)
        case ItemSchema.Name.synchronizable: .bool(synchronizable)
        case ItemSchema.Name.tombstone: .bool(tombstone)
        default: attributes[name]
        }
    }

    /// The item's contribution to a `SecItemCopyMatching` / `SecItemAdd` result, shaped as iOS
    /// shapes it: only data → the data (empty when the item has none); only a persistent
    /// reference → the reference; otherwise a dictionary of what was asked for.
    /// `kSecReturnRef` on an item class without a ref type returns its attributes.
    public func result(for returnTypes: ItemQuery.ReturnTypes) -> KeychainValue? {
        if returnTypes.isEmpty { return nil }
        let secret: Data? = data.map { secret in secret.withUnsafeBytes { Data($0) } }
        if returnTypes == .data { return .data(secret ?? Data()) }
        if returnTypes == .persistentRef { return .data(persistentReference.data) }
        var result: [String: KeychainValue] = [:]
        if !returnTypes.isDisjoint(with: [.attributes, .ref]) { result = attributeDictionary }
        if returnTypes.contains(.data), let secret { result[QueryKey.valueData] = .data(secret) }
        if returnTypes.contains(.persistentRef) {
            result[QueryKey.valuePersistentRef] = .data(persistentReference.data)
        }
        return .dictionary(result)
    }
}
