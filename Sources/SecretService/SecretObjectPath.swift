import KeychainModel

/// The object paths of the Secret Service (its specification, "Object Paths"), and what each
/// names. A collection is named by its own path (`…/collection/NAME`) or an alias
/// (`…/aliases/ALIAS`); which collection that is depends on the caller (``SecretServiceCore``).
enum SecretObjectPath: Equatable {
    /// How a path names a collection.
    enum Place: Equatable {
        case named(String)
        case alias(String)
    }

    case service
    case collection(Place)
    case item(Place, id: String)
    case session(id: String)
    case prompt(id: String)
    /// A path between objects (`…/collection`, `…/aliases`, `…/session`, `…/prompt`):
    /// introspectable, with no interface of its own.
    case node(String)
    /// xdg-desktop-portal's back end (``SecretPortal``).
    case portal

    static let root = "/org/freedesktop/secrets"
    static let noPrompt = "/"

    static func collectionPath(_ name: String) -> String { root + "/collection/" + name }
    static func itemPath(_ collection: String, _ id: String) -> String { collectionPath(collection) + "/" + id }
    static func sessionPath(_ id: String) -> String { root + "/session/" + id }
    static func promptPath(_ id: String) -> String { root + "/prompt/" + id }

    /// What `path` names, or nil for a path that can never name an object here.
    init?(_ path: String) {
        if path == SecretPortal.path {
            self = .portal
            return
        }
        guard path == Self.root || path.hasPrefix(Self.root + "/") else { return nil }
        let e = path.dropFirst(Self.root.count).split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        func place() -> Place? {
            guard SecretServiceCollection.isValidName(e[1]) else { return nil }
            switch e[0] {
            case "collection": return .named(e[1])
            case "aliases": return .alias(e[1])
            default: return nil
            }
        }
        switch e.count {
        case 0:
            self = .service
        case 1 where ["collection", "aliases", "session", "prompt"].contains(e[0]):
            self = .node(e[0])
        case 2 where e[0] == "session":
            self = .session(id: e[1])
        case 2 where e[0] == "prompt":
            self = .prompt(id: e[1])
        case 2:
            guard let place = place() else { return nil }
            self = .collection(place)
        case 3:
            guard let place = place(), !e[2].isEmpty else { return nil }
            self = .item(place, id: e[2])
        default:
            return nil
        }
    }
}

extension SecretObjectPath {
    /// What kind of object a path names, whatever it is called.
    enum Kind: CaseIterable {
        case service, collection, item, session, prompt, node, portal

        /// A path of this kind (its interfaces are the kind's).
        var example: SecretObjectPath {
            switch self {
            case .service: .service
            case .collection: .collection(.named("x"))
            case .item: .item(.named("x"), id: "x")
            case .session: .session(id: "x")
            case .prompt: .prompt(id: "x")
            case .node: .node("x")
            case .portal: .portal
            }
        }
    }

    var kind: Kind {
        switch self {
        case .service: .service
        case .collection: .collection
        case .item: .item
        case .session: .session
        case .prompt: .prompt
        case .node: .node
        case .portal: .portal
        }
    }
}
