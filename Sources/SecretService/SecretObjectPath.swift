/// The object paths of the Secret Service (its specification, "Object Paths"), and what each
/// names. Trousseau shows every caller one collection, `login`, also at the `default` alias.
enum SecretObjectPath: Equatable {
    case service
    /// `…/collection/login` or `…/aliases/default`.
    case collection
    case item(id: String)
    case session(id: String)
    case prompt(id: String)
    /// A path between objects (`…/collection`, `…/aliases`, `…/session`, `…/prompt`):
    /// introspectable, with no interface of its own.
    case node(String)

    static let root = "/org/freedesktop/secrets"
    static let collectionPath = root + "/collection/login"
    static let aliasPath = root + "/aliases/default"
    static let collectionName = "login"
    static let noPrompt = "/"

    static func itemPath(_ id: String) -> String { collectionPath + "/" + id }
    static func sessionPath(_ id: String) -> String { root + "/session/" + id }
    static func promptPath(_ id: String) -> String { root + "/prompt/" + id }

    /// What `path` names, or nil for a path that can never name an object here.
    init?(_ path: String) {
        guard path == Self.root || path.hasPrefix(Self.root + "/") else { return nil }
        let e = path.dropFirst(Self.root.count).split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch e.count {
        case 0:
            self = .service
        case 1 where ["collection", "aliases", "session", "prompt"].contains(e[0]):
            self = .node(e[0])
        case 2 where (e[0] == "collection" && e[1] == Self.collectionName) || (e[0] == "aliases" && e[1] == "default"):
            self = .collection
        case 3 where (e[0] == "collection" && e[1] == Self.collectionName) || (e[0] == "aliases" && e[1] == "default"):
            self = .item(id: e[2])
        case 2 where e[0] == "session":
            self = .session(id: e[1])
        case 2 where e[0] == "prompt":
            self = .prompt(id: e[1])
        default:
            return nil
        }
    }

    /// Whether `path` is the collection, by either of its names.
    static func isCollection(_ path: String) -> Bool {
        path == collectionPath || path == aliasPath
    }
}
