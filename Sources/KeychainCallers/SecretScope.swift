import KeychainModel

/// What one Secret Service caller sees: the access groups whose items are its items, and the
/// group its new items go to. Everything outside is indistinguishable from missing.
///
/// | caller | scope |
/// |---|---|
/// | a Flatpak app (its `/.flatpak-info`) | its own group, `org.freedesktop.secrets.flatpak.<app id>` |
/// | a Snap app (its `snap.<instance>.…` systemd unit) | its own group, `org.freedesktop.secrets.snap.<instance>` |
/// | an app signed for Trousseau | its entitled access groups, new items in its default group |
/// | any other program of the user | the host group, `org.freedesktop.secrets.host`, shared |
///
/// Made only here: by ``CallerIdentification/secretServiceScope(pid:uid:)`` for a bus peer,
/// or ``flatpak(_:)`` for the app xdg-desktop-portal (itself identified) asks for.
public struct SecretScope: Hashable, Sendable, CustomStringConvertible {
    /// For logs: "host", "flatpak org.example.App", "signed TEAMID.app".
    public let description: String
    /// The groups whose items the caller sees; the first is where its new items go.
    public let accessGroups: AccessGroups

    init(description: String, groups: [String]) {
        self.description = description
        self.accessGroups = AccessGroups(groups)
    }

    /// The groups whose items the caller sees.
    public var groups: [String] { accessGroups.groups }
    /// Where the caller's new items go, and the owner of the collections it makes.
    public var defaultGroup: String { accessGroups.groups[0] }

    /// Every unsandboxed, unsigned program of the user: they can read each other's memory
    /// and files, so separating them would protect nothing.
    public static let host = SecretScope(description: "host", groups: [hostGroup])

    public static let groupPrefix = "org.freedesktop.secrets."
    public static let hostGroup = groupPrefix + "host"

    /// The scope of the Flatpak app `appID` (nil for an invalid application id).
    public static func flatpak(_ appID: String) -> SecretScope? {
        guard FlatpakSandbox.isValidApplicationID(appID) else { return nil }
        return SecretScope(description: "flatpak \(appID)", groups: [groupPrefix + "flatpak." + appID])
    }

    /// The scope of the Snap app whose instance name is `name` (nil for an invalid one).
    static func snap(_ name: String) -> SecretScope? {
        guard SnapSandbox.isValidInstanceName(name) else { return nil }
        return SecretScope(description: "snap \(name)", groups: [groupPrefix + "snap." + name])
    }

    /// The scope of a signed app with entitled `accessGroups` (the first is its default).
    static func signed(_ accessGroups: [String]) -> SecretScope? {
        guard let first = accessGroups.first else { return nil }
        return SecretScope(description: "signed \(first)", groups: accessGroups)
    }

    /// The reach of the collection `name` the scope made: exactly its items' group.
    public func collection(named name: String) -> AccessGroups {
        AccessGroups([SecretServiceCollection.itemGroup(owner: defaultGroup, name: name)])
    }

    /// Whether `group` holds Secret Service items of sandboxed or host callers (SecItem
    /// callers' entitlements never name these groups).
    public static func isSecretServiceGroup(_ group: String) -> Bool {
        group.hasPrefix(groupPrefix)
    }
}
