import FoundationEssentials
import KeychainModel

extension KeychainStore {
    /// `SecItemDelete` for a validated query: removes every match in one transaction. A
    /// synchronizable item leaves a tombstone unless the query sets `kSecUseTombstones` false.
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches.
    public func delete(_ query: ItemQuery, caller: AccessGroups) throws {
        let criteria = try SearchCriteria(query, caller: caller)
        try write { db in
            let now = Date()
            let matches: [Match]
            if query.itemClass == .identity {
                matches = try identities(criteria, in: db, limit: nil, withData: false).flatMap { [$0.certificate, $0.key] }
            } else {
                matches = try search(criteria, in: db, limit: nil, withData: false).requireMatches()
            }
            for match in matches {
                try deleteRow(match.row.rowID, of: match.item.itemClass, in: db)
                if match.item.synchronizable, !match.item.tombstone, query.useTombstones ?? true {
                    try insert(seal(tombstone(of: match.item, at: now)), in: db)
                }
            }
        }
    }
}
