import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainCallers

/// The row selection of a query, resolved against the caller's access groups.
struct SearchCriteria {
    var itemClass: ItemClass
    /// Catalogue attributes every match must equal, byte for byte.
    var attributes: [String: KeychainValue]
    /// The groups a match may be in: the one the query names, else all of the caller's.
    var groups: [String]
    /// Set instead of `groups` for a caller that reaches every group but these.
    var excludedGroups: [String]?
    var protection: ProtectionClass?
    var synchronizable: ItemQuery.Synchronizable
    var tombstone: Bool
    var uuid: UUID?

    /// - Throws: `errSecMissingEntitlement` when the query names a group the caller lacks,
    ///   or the caller has none.
    init(_ query: ItemQuery, caller: AccessGroups) throws {
        try caller.requireAny()
        if let group = query.accessGroup {
            try caller.authorize(group)
            groups = [group]
        } else if let excluded = caller.everyGroupExcept {
            groups = []
            excludedGroups = excluded
        } else {
            groups = caller.groups
        }
        itemClass = query.itemClass
        attributes = query.attributes
        protection = query.protection
        synchronizable = query.synchronizable
        tombstone = query.tombstone ?? false
        uuid = query.persistentReference?.uuid
    }

    /// The same selection for another class (an identity's certificate or key half).
    func narrowed(to itemClass: ItemClass, attributes: [String: KeychainValue]) -> SearchCriteria {
        var copy = self
        copy.itemClass = itemClass
        copy.attributes = attributes
        return copy
    }

    /// Whether `item`'s attributes equal every attribute of the criteria. Values compare
    /// by their canonical bytes, as the tokens do (no Unicode normalization).
    func accepts(_ item: KeychainItem) -> Bool {
        attributes.allSatisfy { name, wanted in
            guard let actual = item.attributes[name] else { return false }
            return AttributeCodec.encodeValue(actual) == AttributeCodec.encodeValue(wanted)
        }
    }
}
