/// The access groups a caller may use, in the order of its entitlements:
/// element 0 is the group an add without `agrp` goes to.
///
/// The store trusts this value as "what the caller may touch", so nothing outside this
/// package can make one: securityd builds it from the caller's identification (its code
/// signature), and ``daemonActingForItself(in:)`` when the daemon keeps items of its own.
public struct AccessGroups: Sendable, Hashable {
    public let groups: [String]
    /// When set, the caller reaches every group but these (the `security` tool's view of
    /// the whole keychain); `groups` then only gives its default group.
    public let everyGroupExcept: [String]?

    /// The groups of an identified caller (securityd's caller identification, and tests).
    /// `groups` may be empty: a signed caller entitled to no group can do nothing.
    package init(_ groups: [String]) {
        self.groups = groups
        self.everyGroupExcept = nil
    }

    /// The daemon's own reach into `group`, a group no caller can be entitled to (the local
    /// developer root's key).
    package static func daemonActingForItself(in group: String) -> AccessGroups {
        AccessGroups([group])
    }

    /// Every group but `excluded`, with adds going to `own` by default.
    package static func every(own: String, except excluded: [String]) -> AccessGroups {
        AccessGroups(groups: [own], everyGroupExcept: excluded)
    }

    private init(groups: [String], everyGroupExcept: [String]?) {
        self.groups = groups
        self.everyGroupExcept = everyGroupExcept
    }

    /// The group an add without `kSecAttrAccessGroup` goes to.
    ///
    /// - Throws: `errSecMissingEntitlement` for a caller with no groups.
    public func defaultGroup() throws -> String {
        guard let first = groups.first else { throw Self.noGroups }
        return first
    }

    public func contains(_ group: String) -> Bool {
        if let excluded = everyGroupExcept { return !excluded.contains(group) }
        return groups.contains(group)
    }

    /// Checks an explicitly named group.
    ///
    /// - Throws: `errSecMissingEntitlement` when the caller is not entitled to `group`.
    public func authorize(_ group: String) throws {
        guard contains(group) else {
            throw KeychainError(status: OSStatusCode.missingEntitlement,
                                message: "the caller is not entitled to access group \(group)")
        }
    }

    /// Checks that the caller has a group at all (iOS refuses every call of an app
    /// entitled to none).
    ///
    /// - Throws: `errSecMissingEntitlement` for a caller with no groups.
    public func requireAny() throws {
        guard !groups.isEmpty else { throw Self.noGroups }
    }

    private static let noGroups = KeychainError(
        status: OSStatusCode.missingEntitlement, message: "the caller is entitled to no keychain access group")
}
