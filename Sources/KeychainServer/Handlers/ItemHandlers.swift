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
        let returnsData = parsed?.returnTypes.contains(.data) ?? false
        let groups = try daemon.reach(
            of: authorized.caller, for: .search(query: query, returnsData: returnsData), presence: authorized.presence != nil)
        guard stores.count > 1, let parsed else { return try stores[0].copyMatching(query, caller: groups) }
        // Several keychains, in the order named: the first match for one, every match (up to the limit) otherwise.
        var found: [KeychainValue] = []
        for store in stores {
            let result: KeychainValue?
            do {
                result = try store.copyMatching(query, caller: groups)
            } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
                continue
            }
            guard parsed.limit != .one else { return result }
            if case .array(let items)? = result { found += items }
        }
        if case .count(let limit) = parsed.limit { found = Array(found.prefix(limit)) }
        guard !found.isEmpty else { throw KeychainError(status: OSStatusCode.itemNotFound, message: "no item matches in the keychains searched") }
        return .array(found)
    }
}

extension Service.Update: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let (stores, query) = try daemon.stores(for: authorized.request.query, adding: false)
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: query), presence: authorized.presence != nil)
        try eachFinding(stores) { try $0.update(query, attributes: authorized.request.attributes, caller: groups) }
        return NoResult()
    }
}

extension Service.Delete: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let (stores, query) = try daemon.stores(for: authorized.request.query, adding: false)
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: query), presence: authorized.presence != nil)
        try eachFinding(stores) { try $0.delete(query, caller: groups) }
        return NoResult()
    }
}

/// Runs `change` on every store; errSecItemNotFound only when no store had a match.
private func eachFinding(_ stores: [KeychainStore], _ change: (KeychainStore) throws -> Void) throws {
    var notFound: KeychainError?
    var changed = false
    for store in stores {
        do {
            try change(store)
            changed = true
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            notFound = error
        }
    }
    if !changed, let notFound { throw notFound }
}
