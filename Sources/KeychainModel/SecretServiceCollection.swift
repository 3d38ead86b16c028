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

    /// The name a new collection labelled `label` takes. gnome-keyring names a collection by
    /// its label ("unnamed" when empty; `gkm-secret-collection.c`, `factory_create_collection`),
    /// so clients see `…/collection/Test` for "Test"; an object path element holds only ASCII
    /// letters, digits and `_`, so anything else becomes `_`; at most 56 characters; then `_2`,
    /// `_3`… past `taken` and the reserved names.
    public static func name(forLabel label: String, taken: Set<String>) -> String {
        var base = String(label.unicodeScalars.prefix(56).map { isNameCharacter($0) ? Character($0) : "_" })
        if base.isEmpty { base = "unnamed" }
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
        !name.isEmpty && name.utf8.count <= 64 && name.unicodeScalars.allSatisfy(isNameCharacter)
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
    }
}
