import FoundationEssentials
import GRDB
public import KeychainModel
public import KeychainCallers

// Whole access groups written at once: what a configuration profile installs lives in a
// group of its own, installed, replaced and removed in one transaction each.

extension KeychainStore {
    /// In one transaction: removes every item of `group`, then adds `items` (each naming its
    /// group); an added item whose primary key a live item holds replaces that item.
    ///
    /// - Throws: what an add of any of the items would throw; then nothing is written.
    public func replaceGroup(_ group: String, with items: [[String: KeychainValue]], caller: AccessGroups) throws {
        try caller.authorize(group)
        let keys = OperationKeys(keybag)
        let sealed = try items.map { try sealNewItem(ItemQuery($0, for: .add), caller: caller, keys: keys).1 }
        try write { db in
            try deleteRows(of: group, in: db)
            for row in sealed {
                if let existing = try Row.fetchOne(
                    statements.statement("SELECT rowid FROM \(row.identity.itemClass.rawValue) WHERE pk = ?", in: db),
                    arguments: [row.identity.primaryKeyToken])
                {
                    try deleteRow(existing["rowid"], of: row.identity.itemClass, in: db)
                }
                try insert(row, in: db)
            }
        }
    }

    /// In one transaction: removes every item of `group` and every match of `query`.
    ///
    /// - Throws: `errSecItemNotFound` when `query` matches nothing (then nothing is removed).
    public func deleteGroup(_ group: String, with query: [String: KeychainValue], caller: AccessGroups) throws {
        try caller.authorize(group)
        let criteria = try SearchCriteria(ItemQuery(query, for: .delete), caller: caller)
        try write { db in
            let matches = try search(criteria, in: db, limit: nil, withData: false, keys: OperationKeys(keybag)).requireMatches()
            let now = Date()
            for match in matches {
                try deleteRow(match.row.rowID, of: match.item.itemClass, in: db)
                if Self.syncs(match.item) { try journal(.tombstone, uuid: match.item.persistentReference.uuid, of: match.item.itemClass, at: now, in: db) }
            }
            try deleteRows(of: group, in: db)
        }
    }

    private func deleteRows(of group: String, in db: Database) throws {
        for itemClass in ItemClass.stored {
            try db.execute(sql: "DELETE FROM \(itemClass.rawValue) WHERE agrp = ?", arguments: [group])
        }
    }
}
