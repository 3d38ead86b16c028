import KeychainModel
import KeychainProtocol
import KeychainStore

// SecItem: the stores the query names (the login keychain's unless kSecUseKeychain or
// kSecMatchSearchList name file keychains), with the groups the caller reaches.

extension Service.Add: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> KeychainValue? {
        let (stores, attributes) = try daemon.stores(for: authorized.request.attributes, adding: true)
        let groups = try daemon.reach(of: authorized.caller, for: .add(attributes: attributes), presence: authorized.presence != nil)
        return try stores[0].add(attributes, caller: groups)
    }
}

extension Service.CopyMatching: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> KeychainValue? {
        let (stores, query) = try daemon.stores(for: authorized.request.query, adding: false)
        let parsed = try? ItemQuery(query, for: .copyMatching)
        // A certificate's data is the certificate, public: no secret to guard with presence.
        let returnsData = (parsed?.returnTypes.contains(.data) ?? false) && parsed?.itemClass != .certificate
        let groups = try daemon.reach(
            of: authorized.caller, for: .search(query: query, returnsData: returnsData), presence: authorized.presence != nil)
        // A query that did not parse: the store parses it again and throws its error.
        guard let parsed else { return try stores[0].copyMatching(query, caller: groups) }
        // Parsed once, here (parsing it again in the store was a twentieth of a find's instructions).
        guard stores.count > 1 else { return try stores[0].copyMatching(parsed, caller: groups) }
        var search = KeychainSearch(limit: parsed.limit)
        try search.run(stores) { try $0.copyMatching(parsed, caller: groups) }
        return try search.result()
    }
}

extension Service.Update: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let (stores, query) = try daemon.stores(for: authorized.request.query, adding: false)
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: query), presence: authorized.presence != nil)
        try KeychainSearch.changeEach(stores) { try $0.update(query, attributes: authorized.request.attributes, caller: groups) }
        return NoResult()
    }
}

extension Service.Delete: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let (stores, query) = try daemon.stores(for: authorized.request.query, adding: false)
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: query), presence: authorized.presence != nil)
        try KeychainSearch.changeEach(stores) { try $0.delete(query, caller: groups) }
        return NoResult()
    }
}
