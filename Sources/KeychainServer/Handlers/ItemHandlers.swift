import KeychainModel
import KeychainProtocol

// SecItem: the store, with the groups the caller reaches.

extension Service.Add: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> KeychainValue? {
        let attributes = authorized.request.attributes
        let groups = try daemon.reach(of: authorized.caller, for: .add(attributes: attributes), presence: authorized.presence != nil)
        return try daemon.store.add(attributes, caller: groups)
    }
}

extension Service.CopyMatching: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> KeychainValue? {
        let query = authorized.request.query
        let returnsData = (try? ItemQuery(query, for: .copyMatching))?.returnTypes.contains(.data) ?? false
        let groups = try daemon.reach(
            of: authorized.caller, for: .search(query: query, returnsData: returnsData), presence: authorized.presence != nil)
        return try daemon.store.copyMatching(query, caller: groups)
    }
}

extension Service.Update: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let request = authorized.request
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: request.query), presence: authorized.presence != nil)
        try daemon.store.update(request.query, attributes: request.attributes, caller: groups)
        return NoResult()
    }
}

extension Service.Delete: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let query = authorized.request.query
        let groups = try daemon.reach(of: authorized.caller, for: .change(query: query), presence: authorized.presence != nil)
        try daemon.store.delete(query, caller: groups)
        return NoResult()
    }
}
