import FoundationEssentials
import KeychainModel
public import KeychainCallers

extension KeychainStore {
    /// `SecItemAdd` for a validated query.
    ///
    /// - Throws: `errSecDuplicateItem` when a live item has the same primary key (a
    ///   tombstone there is replaced), `errSecMissingEntitlement` for a group the caller
    ///   lacks, `errSecParam` for a synchronizable item with a constrained access control.
    ///   A synchronizable item joins the sync queue when sync is enabled (ThisDeviceOnly
    ///   ones are stored as asked and never queued).
    public func add(_ query: ItemQuery, caller: AccessGroups) throws -> KeychainValue? {
        let (item, sealed) = try sealNewItem(query, caller: caller, keys: OperationKeys(keybag))
        try write { db in
            try claimPrimaryKey(sealed.identity.primaryKeyToken, of: item.itemClass, excluding: nil, in: db)
            try insert(sealed, in: db)
            if Self.syncs(item) { try journal(.upsert, uuid: item.persistentReference.uuid, of: item.itemClass, at: Date(), in: db) }
        }
        return item.result(for: query.returnTypes)
    }

    /// A new item for an add: checked against the caller's groups and the item rules, with
    /// its defaults and dates, sealed.
    func sealNewItem(_ query: ItemQuery, caller: AccessGroups, keys: OperationKeys) throws -> (KeychainItem, SealedRow) {
        let group = try query.accessGroup ?? caller.defaultGroup()
        try caller.authorize(group)
        let protection = query.protection ?? query.itemClass.defaultProtection
        let synchronizable = query.synchronizable == .yes
        try ItemRules.check(synchronizable: synchronizable, protection: protection, constrainedAccess: query.accessControl.map { !$0.flags.isEmpty } ?? false)

        var attributes = query.attributes
        for attribute in ItemSchema.of(query.itemClass).primaryKey where attributes[attribute.name] == nil {
            if attribute.name != ItemSchema.Name.accessGroup, attribute.name != ItemSchema.Name.synchronizable {
                attributes[attribute.name] = attribute.defaultValue
            }
        }
        let now = Date()
        attributes[ItemSchema.Name.creationDate] = .date(now)
        attributes[ItemSchema.Name.modificationDate] = .date(now)

        var item = KeychainItem(
            itemClass: query.itemClass, attributes: attributes, accessGroup: group,
            protection: protection, synchronizable: synchronizable, tombstone: false,
            persistentReference: PersistentReference(itemClass: query.itemClass, uuid: UUID()),
            data: query.data)
        item.accessControl = query.accessControl
        return (item, try seal(item, keys: keys, authentication: query.authentication))
    }
}
