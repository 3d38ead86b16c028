public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// What one Secret Service caller sees: the access groups whose items are its items, and the
/// group its new items go to. Everything outside is indistinguishable from missing.
///
/// | caller | scope |
/// |---|---|
/// | a Flatpak app (its `/.flatpak-info`) | its own group, `org.freedesktop.secrets.flatpak.<app id>` |
/// | an app signed for Trousseau | its entitled access groups, new items in its default group |
/// | any other program of the user | the host group, `org.freedesktop.secrets.host`, shared |
public struct SecretScope: Hashable, Sendable, CustomStringConvertible {
    /// For logs: "host", "flatpak org.example.App", "signed TEAMID.app".
    public let description: String
    /// The groups whose items the caller sees.
    public let groups: [String]
    /// Where the caller's new items go.
    public let defaultGroup: String

    public init(description: String, groups: [String], defaultGroup: String) {
        self.description = description
        self.groups = groups
        self.defaultGroup = defaultGroup
    }

    /// Every unsandboxed, unsigned program of the user: they can read each other's memory
    /// and files, so separating them would protect nothing.
    public static let host = SecretScope(description: "host", groups: [hostGroup], defaultGroup: hostGroup)

    public static let groupPrefix = "org.freedesktop.secrets."
    public static let hostGroup = groupPrefix + "host"

    /// The scope of the Flatpak app `appID`.
    public static func flatpak(_ appID: String) -> SecretScope {
        let group = groupPrefix + "flatpak." + appID
        return SecretScope(description: "flatpak \(appID)", groups: [group], defaultGroup: group)
    }

    /// The scope of a signed app with entitled `accessGroups` (the first is its default).
    public static func signed(_ accessGroups: [String]) -> SecretScope? {
        guard let first = accessGroups.first else { return nil }
        return SecretScope(description: "signed \(first)", groups: accessGroups, defaultGroup: first)
    }

    /// Whether `group` holds Secret Service items of sandboxed or host callers (SecItem
    /// callers' entitlements never name these groups).
    public static func isSecretServiceGroup(_ group: String) -> Bool {
        group.hasPrefix(groupPrefix)
    }
}

/// Asks the user for the keychain's passcode and unlocks the keychain with it, with `reason`
/// shown; throws when no one can be asked or the user cancels.
public typealias SecretUnlocker = @Sendable (_ reason: String) throws -> Void
