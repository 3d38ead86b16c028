import KeychainModel

/// Where a query goes when it names keychains: the System keychain's path goes to its own
/// securityd (without the key: that daemon serves only it), every other keychain to the
/// user's, which routes file keychains by path itself. In the order the query names them.
struct SystemKeychainRoute {
    var system: Bool
    var query: [String: KeychainValue]

    static func split(_ query: [String: KeychainValue]) -> [SystemKeychainRoute] {
        let named: [KeychainValue]
        if case .array(let list)? = query[QueryKey.matchSearchList] {
            named = list
        } else if let single = query[QueryKey.useKeychain] {
            named = [single]
        } else {
            return [SystemKeychainRoute(system: false, query: query)]
        }
        let system = KeychainValue.string(KeychainName.systemPath)
        guard let index = named.firstIndex(of: system) else { return [SystemKeychainRoute(system: false, query: query)] }
        var systemQuery = query
        systemQuery[QueryKey.matchSearchList] = nil
        systemQuery[QueryKey.useKeychain] = nil
        let others = named.filter { $0 != system }
        guard !others.isEmpty else { return [SystemKeychainRoute(system: true, query: systemQuery)] }
        var userQuery = query
        userQuery[QueryKey.useKeychain] = nil
        userQuery[QueryKey.matchSearchList] = .array(others)
        let user = SystemKeychainRoute(system: false, query: userQuery)
        let systemRoute = SystemKeychainRoute(system: true, query: systemQuery)
        // The System keychain's place in the list decides which is searched first.
        return named.firstIndex(where: { $0 != system })! < index ? [user, systemRoute] : [systemRoute, user]
    }
}
