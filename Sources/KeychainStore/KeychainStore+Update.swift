import FoundationEssentials
import KeychainModel
public import KeychainCallers

extension KeychainStore {
    /// `SecItemUpdate` for a validated query: every match gets `changes` and a new mdat,
    /// in one transaction.
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches, `errSecDuplicateItem` when a
    ///   change gives an item the primary key of another live item (nothing is changed),
    ///   `errSecParam` when there is nothing to change.
    public func update(_ query: ItemQuery, changes: ItemChanges, caller: AccessGroups) throws {
        guard !changes.isEmpty else { throw KeychainError.param("there are no attributes to update") }
        if let group = changes.accessGroup { try caller.authorize(group) }
        let criteria = try SearchCriteria(query, caller: caller)
        try write { db in
            let keys = OperationKeys(keybag)
            let matches = try search(
                criteria, in: db, limit: nil, withData: true, keys: keys, authentication: query.authentication
            ).requireMatches()
            let now = Date()
            for match in matches {
                var item = match.item
                item.attributes.merge(changes.attributes) { _, new in new }
                item.attributes[ItemSchema.Name.modificationDate] = .date(now)
                if let group = changes.accessGroup { item.accessGroup = group }
                if let access = changes.accessControl {
                    item.accessControl = access
                } else if let protection = changes.protection, item.accessControl != nil, protection != item.protection {
                    throw KeychainError.param("the item has an access control: change kSecAttrAccessControl instead")
                }
                if let protection = changes.protection { item.protection = protection }
                if let synchronizable = changes.synchronizable { item.synchronizable = synchronizable }
                if let data = changes.data { item.data = data }
                try ItemRules.check(synchronizable: item.synchronizable, protection: item.protection, constrainedAccess: item.accessControl.map { !$0.flags.isEmpty } ?? false)
                let sealed = try seal(item, keys: keys, authentication: query.authentication)
                try claimPrimaryKey(sealed.identity.primaryKeyToken, of: item.itemClass, excluding: match.row.rowID, in: db)
                try replace(rowID: match.row.rowID, with: sealed, in: db)
                try journalChange(from: match.item, to: item, at: now, in: db)
                // A synchronizable item that moved off its primary key leaves a tombstone there.
                if match.item.synchronizable, sealed.identity.primaryKeyToken != match.row.identity.primaryKeyToken {
                    try insert(seal(tombstone(of: match.item, at: now), keys: keys), in: db)
                }
            }
        }
    }
}
