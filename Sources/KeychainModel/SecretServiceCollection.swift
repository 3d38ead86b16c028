public import FoundationEssentials

/// A collection of the freedesktop Secret Service that a caller made (`CreateCollection`), or
/// the login collection once its label was changed. Collections belong to a scope — the
/// access group its new items go to, ``owner`` — and a created collection keeps its items in
/// an access group of its own (``itemGroup(owner:name:)``), so deleting it can reach nothing else.
public struct SecretServiceCollection: Sendable, Hashable {
    /// The scope's default access group: whose collection it is.
    public var owner: String
    /// The last element of its object path (`/org/freedesktop/secrets/collection/NAME`).
    public var name: String
    public var label: String
    public var created: Date
    public var modified: Date

    public init(owner: String, name: String, label: String, created: Date, modified: Date) {
        self.owner = owner
        self.name = name
        self.label = label
        self.created = created
        self.modified = modified
    }

    /// The collection every scope has, stored in the scope's own groups.
    public static let login = "login"
    /// The collection securityd keeps in memory only.
    public static let session = "session"
    /// Names no created collection takes.
    public static let reserved: Set<String> = [login, session, "default"]

    /// The access group of created collection `name` of `owner`. A `/` is in no access group a
    /// scope has (Flatpak application ids and the host group have none), so no scope's own
    /// group is another's collection.
    public static func itemGroup(owner: String, name: String) -> String {
        owner + "/collection/" + name
    }

    /// The name a new collection labelled `label` takes, as gnome-keyring names its files:
    /// lower-case letters and digits, anything else `_`, at most 32 characters; "collection"
    /// for an empty label; then `_2`, `_3`… past `taken` and the reserved names.
    public static func name(forLabel label: String, taken: Set<String>) -> String {
        var base = String(
            label.lowercased().unicodeScalars.prefix(32).map { scalar -> Character in
                (scalar.isASCII && (("a"..."z").contains(scalar) || ("0"..."9").contains(scalar))) ? Character(scalar) : "_"
            })
        if base.isEmpty { base = "collection" }
        var name = base
        var counter = 1
        while taken.contains(name) || reserved.contains(name) {
            counter += 1
            name = base + "_\(counter)"
        }
        return name
    }

    /// Whether `name` can be an alias or a collection's name: an object path element.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }
}
