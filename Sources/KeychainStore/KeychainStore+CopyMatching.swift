import GRDB
import KeychainModel
public import KeychainCallers

extension KeychainStore {
    /// `SecItemCopyMatching` for a validated query.
    ///
    /// - Returns: one result, or an array when the limit is not one; nil when the query asks
    ///   for nothing back (an existence check).
    /// - Throws: `errSecItemNotFound` when nothing matches, `errSecDecode` when the only
    ///   candidates could not be decrypted.
    public func copyMatching(_ query: ItemQuery, caller: AccessGroups) throws -> KeychainValue? {
        let criteria = try SearchCriteria(query, caller: caller)
        let withData = query.returnTypes.contains(.data)
        let keys = OperationKeys(keybag)
        let items: [KeychainItem]
        if query.itemClass == .identity {
            // Two statements (certificates, then their keys): one transaction sees them consistently.
            items = try read { db in
                try identities(criteria, in: db, limit: query.limit.maximum, withData: withData, keys: keys).map(\.item)
            }
        } else {
            items = try readStatement { db in
                try search(
                    criteria, in: db, limit: query.limit.maximum, withData: withData, keys: keys, authentication: query.authentication
                ).requireMatches().map(\.item)
            }
        }
        if query.returnTypes.isEmpty { return nil }
        if query.limit.returnsArray {
            return .array(items.compactMap { $0.result(for: query.returnTypes) })
        }
        return items[0].result(for: query.returnTypes)
    }
}

extension KeychainStore {
    /// SQLite's `EXPLAIN QUERY PLAN` for the candidate lookup of a `SecItemCopyMatching`
    /// query: shows whether the lookup uses an index. For diagnostics and tests.
    public func queryPlan(for query: [String: KeychainValue], caller: AccessGroups) throws -> [String] {
        let parsed = try ItemQuery(query, for: .copyMatching)
        guard parsed.itemClass != .identity else { throw KeychainError.param("identities are a join; explain certificates and keys") }
        let (sql, arguments) = selectStatement(try SearchCriteria(parsed, caller: caller))
        return try read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments.map(Optional.some))).map {
                $0["detail"] as String
            }
        }
    }
}
