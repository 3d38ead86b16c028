import KeychainModel

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
        let items: [KeychainItem] = try read { db in
            if query.itemClass == .identity {
                return try identities(criteria, in: db, limit: query.limit.maximum, withData: withData).map(\.item)
            }
            return try search(criteria, in: db, limit: query.limit.maximum, withData: withData)
                .requireMatches().map(\.item)
        }
        if query.returnTypes.isEmpty { return nil }
        if query.limit.returnsArray {
            return .array(items.compactMap { $0.result(for: query.returnTypes) })
        }
        return items[0].result(for: query.returnTypes)
    }
}
