import KeychainModel

/// The access groups a caller may use, in the order of its entitlements:
/// element 0 is the group an add without `agrp` goes to.
///
/// The store trusts this value as "what the caller may touch", so only this module makes
/// one: from a caller's identification (``CallerIdentification``, ``SecretScope``), or as
/// one of the named reaches below (the daemon's own groups, a profile's installation, the
/// `security` tool's view). Tests make others through `@testable import`.
public struct AccessGroups: Sendable, Hashable {
    public let groups: [String]
    /// When set, the caller reaches every group but these (the `security` tool's view of
    /// the whole keychain); `groups` then only gives its default group.
    public let everyGroupExcept: [String]?

    /// The groups of an identified caller. `groups` may be empty: a signed caller entitled
    /// to no group can do nothing.
    init(_ groups: [String]) {
        self.groups = groups
        self.everyGroupExcept = nil
    }

    /// Every group but `excluded`, with adds going to `own` by default.
    static func every(own: String, except excluded: [String]) -> AccessGroups {
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

// MARK: - Reaches combined

extension AccessGroups {
    /// Reaches nothing (the Secret Service's session collection, which is not in the store).
    public static let nothing = AccessGroups([])

    /// What any of `reaches` reaches — each already the caller's — with the first one's
    /// default group. Only listed groups combine (a view of every group does not).
    public static func union(_ reaches: [AccessGroups]) -> AccessGroups {
        precondition(reaches.allSatisfy { $0.everyGroupExcept == nil }, "only listed groups combine")
        var seen = Set<String>()
        return AccessGroups(reaches.flatMap(\.groups).filter { seen.insert($0).inserted })
    }
}

// MARK: - The daemon's own reaches

extension AccessGroups {
    /// securityd's own groups, in Trousseau's reserved namespace: no caller can be entitled
    /// to them, and the `security` tool's view of the keychain leaves them out.
    public enum DaemonGroup: String, CaseIterable, Sendable {
        /// The local developer root's key.
        case developerRoot = "trousseau.developer-root"
        /// The user's trust settings.
        case trustSettings = "trousseau.trust-settings"
        /// The records of installed configuration profiles.
        case profileRecords = "trousseau.profiles"
    }

    /// The daemon's reach into one of its own groups.
    public static func daemon(_ group: DaemonGroup) -> AccessGroups {
        AccessGroups([group.rawValue])
    }

    /// The prefix of the group a configuration profile's items are installed in (the
    /// profile's identifier follows).
    public static let profileItemGroupPrefix = "trousseau.profile."

    /// Installing or removing the configuration profile `identifier`: its items' group and
    /// the profiles' records.
    public static func profileInstallation(_ identifier: String) -> AccessGroups {
        AccessGroups([profileItemGroupPrefix + identifier, DaemonGroup.profileRecords.rawValue])
    }

    /// Finding the identity a profile's encrypted payload is for, among every group's
    /// certificates and keys (securityd decrypts it for the `security` tool, with presence).
    public static let profileDecryption = AccessGroups.every(own: DaemonGroup.profileRecords.rawValue, except: [])

    /// The `security` tool's view of the keychain: every group but the daemon's own, adds
    /// going to the tool's group.
    public static let securityToolView = AccessGroups.every(
        own: Caller.securityToolGroup, except: DaemonGroup.allCases.map(\.rawValue))
}

// MARK: - Sync

extension AccessGroups {
    /// Whether items of `group` may sync to the user's other devices: not the daemon's own
    /// groups, a configuration profile's (installed per device), nor a Secret Service
    /// collection's (the Secret Service's items stay local). The `security` tool's group
    /// syncs: it holds the user's own items. Checked when a change is queued and again when
    /// a record arrives, so a device cannot write into these groups of another.
    public static func maySync(_ group: String) -> Bool {
        if group == Caller.securityToolGroup { return true }
        if group.hasPrefix("trousseau.") { return false }  // the reserved namespace
        return !group.contains("/collection/")
    }
}
