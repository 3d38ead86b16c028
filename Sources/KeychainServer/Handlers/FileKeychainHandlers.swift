import KeychainModel
import KeychainProtocol
import KeychainSystem
import KeychainStore

// File keychains, the search list and the default keychain.

extension Service.CreateKeychain: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let request = authorized.request
        try daemon.fileKeychains.create(request.path, password: request.password, settings: request.settings)
        // As macOS's SecKeychainCreate: the new keychain joins the user's search list.
        try daemon.searchList.append(request.path)
        return NoResult()
    }
}

extension Service.DeleteKeychain: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let path = authorized.request.path
        if path == daemon.searchList.loginPath {
            throw KeychainError(status: OSStatusCode.wrPerm, message: "the login keychain is not deleted by delete-keychain")
        }
        try daemon.fileKeychains.delete(path)
        try daemon.searchList.forget(path)
        return NoResult()
    }
}

extension Service.UnlockKeychain: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.fileKeychains.unlock(authorized.request.path, password: authorized.request.password)
        return NoResult()
    }
}

extension Service.LockKeychain: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.fileKeychains.lock(authorized.request.path)
        return NoResult()
    }
}

extension Service.KeychainInfo: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let (settings, unlocked) = try daemon.fileKeychains.info(authorized.request.path)
        return Response(settings: settings, unlocked: unlocked)
    }
}

extension Service.SetKeychainSettings: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.fileKeychains.setSettings(authorized.request.path, authorized.request.settings)
        return NoResult()
    }
}

extension Service.ChangeKeychainPassword: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let request = authorized.request
        try daemon.fileKeychains.changePassword(request.path, old: request.old, new: request.new)
        return NoResult()
    }
}

extension Service.SearchList: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.KeychainList {
        // Like SecKeychainSetSearchList, any path is accepted: a keychain may come later.
        if let replacement = authorized.request.replacement { try daemon.searchList.setList(replacement.paths) }
        return Service.KeychainList(try daemon.searchList.list())
    }
}

extension Service.DefaultKeychain: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.KeychainList {
        if let replacement = authorized.request.replacement {
            try daemon.checkKeychains([replacement])
            try daemon.searchList.setDefault(replacement)
        }
        return Service.KeychainList([try daemon.searchList.defaultKeychain()])
    }
}

extension RequestDispatcher {
    /// Refuses paths that are not keychains (errSecNoSuchKeychain, errSecInvalidKeychain):
    /// the default keychain must be one, unlike the search list's entries.
    func checkKeychains(_ paths: [String]) throws {
        for path in paths where path != searchList.loginPath {
            _ = try fileKeychains.info(path)
        }
    }

    /// The stores a query names (`kSecMatchSearchList`, or `kSecUseKeychain` for an add),
    /// by path, with the query stripped of them; the login keychain's when it names none.
    func stores(for query: [String: KeychainValue], adding: Bool) throws -> (stores: [KeychainStore], query: [String: KeychainValue]) {
        var stripped = query
        let useKeychain = stripped.removeValue(forKey: QueryKey.useKeychain)
        let searchListValue = stripped.removeValue(forKey: QueryKey.matchSearchList)
        var paths: [String]
        switch adding ? useKeychain : searchListValue ?? useKeychain {
        case nil: return ([store], stripped)
        case .string(let path): paths = [path]
        case .array(let values) where !adding:
            paths = try values.map { value in
                guard case .string(let path) = value else { throw KeychainError.param("kSecMatchSearchList holds keychains") }
                return path
            }
        default:
            throw KeychainError.param(adding ? "kSecUseKeychain is a keychain" : "kSecMatchSearchList is an array of keychains")
        }
        if paths.isEmpty { paths = [self.searchList.loginPath] }
        return (try paths.map { $0 == self.searchList.loginPath ? store : try fileKeychains.store($0) }, stripped)
    }
}
