import FoundationEssentials
import GRDB
import KeychainModel
public import KeychainCallers

extension KeychainStore {
    /// `SecItemDelete` for a validated query: removes every match in one transaction. A
    /// synchronizable item leaves a tombstone unless the query sets `kSecUseTombstones` false.
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches.
    public func delete(_ query: ItemQuery, caller: AccessGroups) throws {
        let criteria = try SearchCriteria(query, caller: caller)
        try write { db in
            let now = Date()
            let keys = OperationKeys(keybag)
            var matches: [Match]
            if query.itemClass == .identity {
                // The certificates go; a key goes with them only when no other certificate
                // still names it (SecItem.m's identity delete), and once however many did.
                let found = try identities(criteria, in: db, limit: nil, withData: false, keys: keys)
                matches = found.map(\.certificate)
                for match in matches { try deleteRow(match.row.rowID, of: match.item.itemClass, in: db) }
                var seen: Set<Int64> = []
                for key in found.map(\.key) where seen.insert(key.row.rowID).inserted {
                    guard let label = key.item.attributes["klbl"] else { continue }
                    let others = try search(
                        criteria.narrowed(to: .certificate, attributes: ["pkhh": label]), in: db, limit: 1, withData: false, keys: keys)
                    guard others.matches.isEmpty else { continue }
                    try deleteRow(key.row.rowID, of: .key, in: db)
                    matches.append(key)
                }
            } else {
                matches = try search(criteria, in: db, limit: nil, withData: false, keys: keys).requireMatches()
                for match in matches { try deleteRow(match.row.rowID, of: match.item.itemClass, in: db) }
            }
            for match in matches {
                // The delete syncs whether or not a tombstone stays here (kSecUseTombstones
                // says only whether this keychain keeps one).
                if Self.syncs(match.item) {
                    try journal(.tombstone, uuid: match.item.persistentReference.uuid, of: match.item.itemClass, at: now, in: db)
                }
                if match.item.synchronizable, !match.item.tombstone, query.useTombstones ?? true {
                    try insert(seal(tombstone(of: match.item, at: now), keys: keys), in: db)
                }
            }
        }
    }
}

extension KeychainStore {
    /// Deletes every item of `protection`, in every class and group: what removing the
    /// passcode does to WhenPasscodeSetThisDeviceOnly items, whose class key is gone.
    ///
    /// - Returns: how many rows were removed.
    @discardableResult
    public func purge(_ protection: ProtectionClass) throws -> Int {
        try write { db in
            var removed = 0
            for itemClass in ItemClass.stored {
                try db.execute(sql: "DELETE FROM \(itemClass.rawValue) WHERE pdmn = ?", arguments: [protection.rawValue])
                removed += db.changesCount
            }
            return removed
        }
    }
}
