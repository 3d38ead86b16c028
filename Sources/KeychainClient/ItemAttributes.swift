public import FoundationEssentials
public import KeychainModel

/// The attributes of an item besides its name; nil leaves an attribute unset (or, in an
/// update, unchanged).
public struct ItemAttributes: Hashable, Sendable {
    /// `kSecAttrLabel`.
    public var label: String?
    /// `kSecAttrComment`.
    public var comment: String?
    /// `kSecAttrDescription`.
    public var itemDescription: String?
    /// `kSecAttrGeneric` (generic passwords only).
    public var generic: Data?
    /// `kSecAttrAccessGroup`: one of this process's groups; its default group when nil.
    public var accessGroup: String?
    /// `kSecAttrAccessible`: when the secret can be read; `.whenUnlocked` when nil.
    public var protection: ProtectionClass?
    /// `kSecAttrSynchronizable`.
    public var synchronizable: Bool?

    public init(
        label: String? = nil, comment: String? = nil, itemDescription: String? = nil, generic: Data? = nil,
        accessGroup: String? = nil, protection: ProtectionClass? = nil, synchronizable: Bool? = nil
    ) {
        self.label = label
        self.comment = comment
        self.itemDescription = itemDescription
        self.generic = generic
        self.accessGroup = accessGroup
        self.protection = protection
        self.synchronizable = synchronizable
    }

    /// The attributes by Apple's four-letter names.
    public var dictionary: [String: KeychainValue] {
        var attributes: [String: KeychainValue] = [:]
        attributes["labl"] = label.map { .string($0) }
        attributes["icmt"] = comment.map { .string($0) }
        attributes["desc"] = itemDescription.map { .string($0) }
        attributes["gena"] = generic.map { .data($0) }
        attributes[ItemSchema.Name.accessGroup] = accessGroup.map { .string($0) }
        attributes[ItemSchema.Name.accessible] = protection.map { .string($0.rawValue) }
        attributes[ItemSchema.Name.synchronizable] = synchronizable.map { .bool($0) }
        return attributes
    }

    /// The attributes of a result dictionary.
    public init(_ attributes: [String: KeychainValue]) {
        self.init(
            label: attributes["labl"]?.stringValue, comment: attributes["icmt"]?.stringValue,
            itemDescription: attributes["desc"]?.stringValue, generic: attributes["gena"]?.dataValue,
            accessGroup: attributes[ItemSchema.Name.accessGroup]?.stringValue,
            protection: attributes[ItemSchema.Name.accessible]?.stringValue.flatMap(ProtectionClass.init(rawValue:)),
            synchronizable: attributes[ItemSchema.Name.synchronizable]?.boolValue)
    }
}

/// An item found in the keychain: its name, attributes and dates, without its secret.
public struct StoredItem<Item: PasswordItem>: Hashable, Sendable {
    public let item: Item
    public let attributes: ItemAttributes
    /// `kSecAttrCreationDate`.
    public let creationDate: Date?
    /// `kSecAttrModificationDate`.
    public let modificationDate: Date?
    /// `kSecValuePersistentRef`: names this item in later queries, across restarts.
    public let persistentReference: Data?

    init?(_ attributes: [String: KeychainValue]) {
        guard let item = Item(attributes: attributes) else { return nil }
        self.item = item
        self.attributes = ItemAttributes(attributes)
        self.creationDate = attributes[ItemSchema.Name.creationDate]?.dateValue
        self.modificationDate = attributes[ItemSchema.Name.modificationDate]?.dateValue
        self.persistentReference = attributes[QueryKey.valuePersistentRef]?.dataValue
    }
}
