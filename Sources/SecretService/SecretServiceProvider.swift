import CSystemd
import Dispatch
import FoundationEssentials
public import KeychainCallers
import KeychainModel
public import KeychainStore

#if canImport(Glibc)
import Glibc
#endif

/// The freedesktop Secret Service on the session bus: `org.freedesktop.secrets`, its
/// objects resolved per caller (``SecretScope``), its items keychain items
/// (``KeychainStore`` 's Secret Service operations).
///
/// Everything runs on the one thread that ``run(address:)`` blocks (an sd-bus connection is
/// not thread-safe): messages are handled one at a time, in order.
public final class SecretServiceProvider: @unchecked Sendable {
    // @unchecked: every property below is touched only by the bus thread.
    let store: KeychainStore
    private let scopes: CallerScopes
    private var bus: OpaquePointer?
    private var connections: [String: Connection] = [:]
    private var counter = 0
    /// When this provider started: the login collection's creation date until its label is set.
    let started = Date()
    private var stopRequested: Int32 = 0
    private let unlocker: SecretUnlocker?
    /// Signalled when an unlock prompt finishes on its own thread.
    private let wake: Int32
    private let finishedPrompts = BlockingMutex<[FinishedPrompt]>([])
    /// This provider's own unique name on the bus.
    private var uniqueName = ""
    /// Each scope's collections and aliases as stored (by owner), read once and dropped
    /// whenever this provider changes them: a search needs no read of its own to find them.
    var storedCollections: [String: [SecretServiceCollection]] = [:]
    /// Each owner's aliases with the fixed ones and the default's fallback merged in.
    var storedAliases: [String: [String: String]] = [:]
    /// Each scope's collections resolved (login, session, those it made), until it changes them.
    var resolvedCollections: [SecretScope: [ScopedCollection]] = [:]
    /// Collections a client locked (``lockKey(_:)``): unreadable through the Secret Service
    /// until an unlock prompt succeeds, whatever the keychain's state. Held in memory: a
    /// restart of securityd unlocks them (docs/SECURITY.md).
    var lockedCollections: Set<String> = []
    let sessionItems = SessionCollection()

    /// One client connection's state: sessions and prompts die with it.
    final class Connection {
        let scope: SecretScope
        var sessions: [String: SecretSession] = [:]
        var prompts: [String: PendingPrompt] = [:]
        init(scope: SecretScope) { self.scope = scope }
    }

    /// A prompt: what the user is asked to allow, and whether they are being asked.
    struct PendingPrompt {
        enum Action {
            /// `Unlock` of these objects.
            case unlock([String])
            /// `Delete` of the login collection (its items), or of the one `default` names.
            case delete(String)
        }
        var action: Action
        var asking = false
    }

    /// A prompt whose asking ended (on another thread).
    struct FinishedPrompt: Sendable {
        let connection: String
        let id: String
        let confirmed: Bool
    }

    /// The most collections one scope makes (a careless client's loop ends with an error).
    static let collectionLimit = 1_000
    /// Aliases that always name one collection.
    static let fixedAliases = [SecretServiceCollection.session: SecretServiceCollection.session, SecretServiceCollection.login: SecretServiceCollection.login]

    public static let busName = "org.freedesktop.secrets"

    /// - Parameter unlocker: asks the user for the keychain's passcode (the agent or terminal
    ///   of ``PresenceFrontEnd``) and unlocks with it; it throws when no one can be asked or
    ///   the user cancels. Runs on a thread of its own, never the bus's.
    public init(store: KeychainStore, scopes: CallerScopes, unlocker: SecretUnlocker? = nil) {
        self.store = store
        self.scopes = scopes
        self.unlocker = unlocker
        self.wake = trousseau_bus_wake_fd()
    }

    deinit {
        if wake >= 0 { close(wake) }
    }

    /// Connects to the session bus (or `address`), takes the name, and serves until the bus
    /// goes away. Blocks.
    ///
    /// - Parameter ready: called once, with nil when the name is this process's, else with
    ///   why not (the run then returns at once).
    /// - Returns: why it stopped, for the log.
    public func run(address: String?, name: String = SecretServiceProvider.busName, ready: (String?) -> Void = { _ in }) -> String {
        var announced = false
        let outcome = serve(address: address, name: name) {
            announced = true
            ready(nil)
        }
        if !announced { ready(outcome) }
        return outcome
    }

    private func serve(address: String?, name: String, owned: () -> Void) -> String {
        var connection: OpaquePointer?
        var result = trousseau_bus_open(address, 0, &connection)
        guard result >= 0, let connection else { return "cannot connect to the session bus: \(Self.describe(result))" }
        bus = connection
        defer {
            sd_bus_flush_close_unref(connection)
            bus = nil
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Every path, not only the service's tree: a call on a path that names nothing here is
        // NoSuchObject, the error clients map to "no such item" (secretstorage 3.3.3 knows no
        // other), and the paths above the tree introspect towards it.
        result = sd_bus_add_fallback(connection, nil, "/", Self.handleCall, context)
        guard result >= 0 else { return "cannot serve \(Self.root): \(Self.describe(result))" }
        result = SecretPortal.path.withCString { sd_bus_add_object(connection, nil, $0, Self.handleCall, context) }
        guard result >= 0 else { return "cannot serve \(SecretPortal.path): \(Self.describe(result))" }
        result = sd_bus_match_signal(
            connection, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
            Self.handleNameOwnerChanged, context)
        guard result >= 0 else { return "cannot watch connections: \(Self.describe(result))" }
        result = sd_bus_request_name(connection, name, 0)
        guard result >= 0 else {
            return result == -EEXIST ? "\(name) has another owner" : "cannot own \(name): \(Self.describe(result))"
        }
        var unique: UnsafePointer<CChar>?
        if sd_bus_get_unique_name(connection, &unique) >= 0, let unique { uniqueName = String(cString: unique) }
        owned()
        // Connections already on the bus are placed now, as later ones are when they appear.
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        if sd_bus_list_names(connection, &names, nil) >= 0, let names {
            var index = 0
            while let name = names[index] {
                connectionAppeared(String(cString: name))
                free(name)
                index += 1
            }
            free(names)
        }
        result = trousseau_bus_run(connection, &stopRequested, wake, Self.handleWake, context)
        return result == 0 ? "stopped" : "the session bus went away (\(Self.describe(result)))"
    }

    private static let root = SecretObjectPath.root

    static func describe(_ negativeErrno: Int32) -> String {
        String(cString: strerror(-negativeErrno))
    }

    // MARK: - Dispatch

    private static let handleCall: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().handle(message)
        return 1
    }

    private static let handleWake: trousseau_bus_woken = { userdata in
        guard let userdata else { return }
        Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().completeFinishedPrompts()
    }

    private static let handleNameOwnerChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let reader = BusReader(message: message)
        guard reader.signature == "sss", let name = try? reader.string(), let oldOwner = try? reader.string(),
            let newOwner = try? reader.string(), name.hasPrefix(":")
        else { return 0 }
        let provider = Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue()
        if newOwner.isEmpty {
            provider.connections[name] = nil
        } else if oldOwner.isEmpty {
            provider.connectionAppeared(name)
        }
        return 0
    }

    private func handle(_ message: OpaquePointer) {
        let call = Call(message: message)
        do {
            try dispatch(call)
        } catch let error as BusError {
            _ = trousseau_bus_reply_error(message, error.name, error.message)
        } catch {
            _ = trousseau_bus_reply_error(message, BusError.failed("").name, "internal error")
        }
    }

    /// One method call: its path, interface, member, sender and arguments.
    struct Call {
        let message: OpaquePointer
        var path: String { sd_bus_message_get_path(message).map { String(cString: $0) } ?? "" }
        var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
        var member: String { sd_bus_message_get_member(message).map { String(cString: $0) } ?? "" }
        var sender: String { sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "" }
        var reader: BusReader { BusReader(message: message) }

        /// Checks the arguments' signature before anything is read.
        func expect(_ signature: String) throws -> BusReader {
            let reader = BusReader(message: message)
            guard reader.signature == signature else {
                throw BusError.invalidArgs("\(member) takes (\(signature)), not (\(reader.signature))")
            }
            return reader
        }
    }

    private func connection(for sender: String) throws -> Connection {
        if let known = connections[sender] { return known }
        guard let bus else { throw BusError.failed("not connected") }
        let connection = Connection(scope: try scopes.scope(of: sender, bus: bus))
        connections[sender] = connection
        return connection
    }

    /// A connection that appeared on the bus (or was there when the provider started): its
    /// scope is known at once, so that it receives its scope's signals before it ever calls.
    /// One that cannot be placed (another user's, a refused sandbox) receives nothing.
    func connectionAppeared(_ name: String) {
        guard name.hasPrefix(":"), name != uniqueName, connections[name] == nil else { return }
        _ = try? connection(for: name)
    }

    private func dispatch(_ call: Call) throws {
        if call.path == SecretPortal.path { return try portal(call) }
        guard let object = SecretObjectPath(call.path) else {
            let above = Self.root.hasPrefix(call.path == "/" ? "/" : call.path + "/")
            guard above, call.interface == "org.freedesktop.DBus.Introspectable", call.member == "Introspect" else {
                throw BusError.noSuchObject(call.path)
            }
            // "/", "/org", "/org/freedesktop": one child each, on the way to the service.
            let child = Self.root.dropFirst(call.path == "/" ? 1 : call.path.count + 1).split(separator: "/").first.map(String.init)
            return try reply(call) { $0.append(.string(Introspection.document(interfaces: [], children: child.map { [$0] } ?? []))) }
        }
        let caller = try connection(for: call.sender)
        let interface = call.interface ?? interfaces(of: object).first { methods(of: $0).contains(call.member) } ?? ""
        // Objects outside the caller's view are missing, whatever the interface. GetSecret —
        // half of every lookup — finds its item in the one read that opens it, and answers
        // NoSuchObject itself when there is none.
        let opensItself: Bool
        if case .item = object, interface == Introspection.item, call.member == "GetSecret" { opensItself = true } else { opensItself = false }
        if !opensItself { try requireExists(object, for: caller, path: call.path) }
        switch (interface, object) {
        case ("org.freedesktop.DBus.Introspectable", _):
            guard call.member == "Introspect" else { throw BusError.unknownMethod(interface, call.member) }
            _ = try call.expect("")
            try reply(call) { $0.append(.string(Introspection.document(interfaces: interfaces(of: object), children: children(of: object, caller)))) }
        case ("org.freedesktop.DBus.Properties", _):
            try properties(call, object, caller)
        case (Introspection.service, .service):
            try serviceMethod(call, caller)
        case (Introspection.collection, .collection(let place)):
            try collectionMethod(call, try collection(place, caller, path: call.path), caller)
        case (Introspection.item, .item(let place, let id)):
            try itemMethod(call, id: id, in: try collection(place, caller, path: call.path), caller)
        case (Introspection.session, .session(let id)):
            guard call.member == "Close" else { throw BusError.unknownMethod(interface, call.member) }
            _ = try call.expect("")
            caller.sessions[id] = nil
            try reply(call) { _ in }
        case (Introspection.prompt, .prompt(let id)):
            try promptMethod(call, id: id, caller)
        default:
            throw BusError.unknownMethod(interface, call.member)
        }
    }

    private func requireExists(_ object: SecretObjectPath, for caller: Connection, path: String) throws {
        switch object {
        case .collection(let place):
            _ = try collection(place, caller, path: path)
        case .item(let place, let id):
            let collection = try collection(place, caller, path: path)
            guard try itemExists(id, in: collection) else { throw BusError.noSuchObject(path) }
        case .session(let id):
            guard caller.sessions[id] != nil else { throw BusError.unknownObject(path) }
        case .prompt(let id):
            guard caller.prompts[id] != nil else { throw BusError.unknownObject(path) }
        case .service, .node:
            break
        }
    }

    private func interfaces(of object: SecretObjectPath) -> [String] {
        switch object {
        case .service: [Introspection.service]
        case .collection: [Introspection.collection]
        case .item: [Introspection.item]
        case .session: [Introspection.session]
        case .prompt: [Introspection.prompt]
        case .node: []
        }
    }

    private func methods(of interface: String) -> [String] {
        switch interface {
        case Introspection.service: ["OpenSession", "CreateCollection", "SearchItems", "Unlock", "Lock", "GetSecrets", "ReadAlias", "SetAlias"]
        case Introspection.collection: ["Delete", "SearchItems", "CreateItem"]
        case Introspection.item: ["Delete", "GetSecret", "SetSecret"]
        case Introspection.session: ["Close"]
        case Introspection.prompt: ["Prompt", "Dismiss"]
        default: []
        }
    }

    private func children(of object: SecretObjectPath, _ caller: Connection) -> [String] {
        switch object {
        case .service: ["collection", "aliases"]
        case .node("collection"): (try? collections(caller).map(\.name)) ?? []
        case .node("aliases"): (try? aliases(caller).keys.sorted()) ?? []
        case .node("session"): caller.sessions.keys.sorted()
        case .node("prompt"): caller.prompts.keys.sorted()
        case .collection(let place):
            (try? collection(place, caller, path: "")).flatMap { try? itemIDs(in: $0, matching: [:]) } ?? []
        default: []
        }
    }

    // MARK: - org.freedesktop.Secret.Service

    private func serviceMethod(_ call: Call, _ caller: Connection) throws {
        switch call.member {
        case "OpenSession":
            let reader = try call.expect("sv")
            let algorithm = try reader.string()
            let contents = try reader.variantContents()
            var input: [UInt8] = []
            switch contents {
            case "ay":
                try reader.enter("v", "ay")
                input = try reader.bytes()
                try reader.exit()
            case "s":
                try reader.enter("v", "s")
                _ = try reader.string()
                try reader.exit()
            default:
                guard algorithm != SecretSession.Algorithm.dhAES.rawValue else {
                    throw BusError.invalidArgs("the input of \(algorithm) is the client's public key, an ay")
                }
                try reader.skip("v")
            }
            let (session, output): (SecretSession, [UInt8])
            do {
                (session, output) = try SecretSession.open(algorithm: algorithm, input: input)
            } catch {
                throw Self.busError(error)
            }
            counter += 1
            let id = "s\(counter)"
            caller.sessions[id] = session
            try reply(call) { writer in
                if session.algorithm == .plain {
                    writer.appendVariant(.string(""))
                } else {
                    writer.appendVariant(.bytes(output))
                }
                writer.append(.objectPath(SecretObjectPath.sessionPath(id)))
            }
        case "CreateCollection":
            let reader = try call.expect("a{sv}s")
            let properties = try reader.properties()
            let alias = try reader.string()
            var label = ""
            if let given = properties[Introspection.collection + ".Label"] {
                guard case .string(let string) = given else { throw BusError.invalidArgs("\(Introspection.collection).Label is a string") }
                label = string
            }
            guard alias.isEmpty || SecretServiceCollection.isValidName(alias) else {
                throw BusError.invalidArgs("an alias is 1 to 64 letters, digits or _")
            }
            // An alias that names a collection already answers with it (the specification).
            if !alias.isEmpty, let name = try aliases(caller)[alias], let existing = try collections(caller).first(where: { $0.name == name }) {
                return try reply(call) { writer in
                    writer.append(.objectPath(existing.path))
                    writer.append(.objectPath(SecretObjectPath.noPrompt))
                }
            }
            // A scope makes its collections without a prompt: a new collection holds only
            // what its maker stores there, and nothing else can be deleted through it.
            let owned = try collections(caller).count
            guard owned < Self.collectionLimit else {
                throw BusError.failed("a scope has at most \(Self.collectionLimit) collections; delete one first")
            }
            let created = try storeCall { try store.createSecretServiceCollection(owner: caller.scope, label: label) }
            if !alias.isEmpty {
                try storeCall { try store.setSecretServiceAlias(owner: caller.scope, alias: alias, name: created.name) }
            }
            forgetCollections(of: caller.scope.defaultGroup)
            let path = SecretObjectPath.collectionPath(created.name)
            try reply(call) { writer in
                writer.append(.objectPath(path))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
            announceCollections("CollectionCreated", path, caller)
        case "SearchItems":
            let attributes = try call.expect("a{ss}").stringDictionary()
            let (unlocked, locked) = try search(caller, attributes)
            try reply(call) { writer in
                writer.append(.objectPaths(unlocked))
                writer.append(.objectPaths(locked))
            }
        case "Lock":
            let objects = try call.expect("ao").objectPaths()
            var locked: [String] = []
            for path in objects {
                guard (try? exists(path, caller)) == true, let collection = try? collection(containing: path, caller) else { continue }
                if lockedCollections.insert(lockKey(collection)).inserted {
                    announce([("Locked", .bool(true))], of: collection, scope: caller.scope)
                }
                locked.append(path)
            }
            try reply(call) { writer in
                writer.append(.objectPaths(locked))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
        case "Unlock":
            let objects = try call.expect("ao").objectPaths()
            let mine = objects.filter { (try? exists($0, caller)) == true }
            // A prompt when the keychain is locked, or any collection asked for is.
            let needsUser = store.secretServiceIsLocked()
                || mine.contains { path in (try? collection(containing: path, caller)).map { isLockedByRequest($0) } ?? false }
            guard !needsUser else {
                let prompt = newPrompt(.unlock(objects), caller)
                try reply(call) { writer in
                    writer.append(.objectPaths([]))
                    writer.append(.objectPath(prompt))
                }
                return
            }
            // Every object of the caller's that exists is unlocked (python keyring asks for
            // an already unlocked item every time; Chromium needs the collection back).
            try reply(call) { writer in
                writer.append(.objectPaths(mine))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
        case "GetSecrets":
            let reader = try call.expect("aoo")
            let paths = try reader.objectPaths()
            let session = try session(try reader.objectPath(), caller)
            var secrets: [(String, SecretBytes, String)] = []
            for path in paths {
                guard case .item(let place, let id)? = SecretObjectPath(path), let collection = try? collection(place, caller, path: path),
                    let (secret, item) = try? secret(id, in: collection)
                else { continue }
                secrets.append((path, secret, item.contentType))
            }
            try reply(call, sensitive: true) { writer in
                writer.open("a", "{o(oayays)}")
                for (path, secret, contentType) in secrets {
                    writer.open("e", "o(oayays)")
                    writer.append(.objectPath(path))
                    append(secret, contentType: contentType, session: session, to: &writer)
                    writer.close()
                }
                writer.close()
            }
        case "ReadAlias":
            let name = try call.expect("s").string()
            let path = try aliases(caller)[name].map(SecretObjectPath.collectionPath) ?? SecretObjectPath.noPrompt
            try reply(call) { $0.append(.objectPath(path)) }
        case "SetAlias":
            let reader = try call.expect("so")
            let name = try reader.string()
            let path = try reader.objectPath()
            guard SecretServiceCollection.isValidName(name) else { throw BusError.invalidArgs("an alias is 1 to 64 letters, digits or _") }
            let target: String?
            if path == SecretObjectPath.noPrompt {
                target = nil
            } else {
                guard case .collection(let place)? = SecretObjectPath(path) else { throw BusError.noSuchObject(path) }
                target = try collection(place, caller, path: path).name
            }
            // The session and login collections keep the names they are known by.
            if Self.fixedAliases[name] != nil {
                guard target == Self.fixedAliases[name] else {
                    throw BusError.notSupported("the alias \(name) always names the \(Self.fixedAliases[name]!) collection")
                }
                return try reply(call) { _ in }
            }
            try storeCall { try store.setSecretServiceAlias(owner: caller.scope, alias: name, name: target) }
            forgetCollections(of: caller.scope.defaultGroup)
            try reply(call) { _ in }
        default:
            throw BusError.unknownMethod(Introspection.service, call.member)
        }
    }

    // MARK: - org.freedesktop.Secret.Collection

    private func collectionMethod(_ call: Call, _ collection: ScopedCollection, _ caller: Connection) throws {
        switch call.member {
        case "SearchItems":
            let attributes = try call.expect("a{ss}").stringDictionary()
            let paths: [String]
            if isLocked(collection) {
                paths = try itemIDs(in: collection, matching: attributes).map { collection.itemPath($0) }
            } else {
                paths = try items(in: collection, matching: attributes).map { collection.itemPath($0.id) }
            }
            try reply(call) { $0.append(.objectPaths(paths)) }
        case "CreateItem":
            let reader = try call.expect("a{sv}(oayays)b")
            sd_bus_message_sensitive(call.message)
            let properties = try reader.properties()
            let (sessionPath, parameters, value, contentType) = try reader.secretStruct()
            let replace = try reader.bool()
            var label = ""
            if let given = properties[Introspection.item + ".Label"] {
                guard case .string(let string) = given else { throw BusError.invalidArgs("\(Introspection.item).Label is a string") }
                label = string
            }
            var attributes: [String: String] = [:]
            if let given = properties[Introspection.item + ".Attributes"] {
                guard case .attributes(let dictionary) = given else {
                    throw BusError.invalidArgs("\(Introspection.item).Attributes is an a{ss}")
                }
                attributes = dictionary
            }
            let secret = try decode(sessionPath, parameters, value, caller)
            try requireUnlocked(collection)
            let type = contentType.isEmpty ? "text/plain" : contentType
            let (item, isNew): (SecretServiceItem, Bool)
            if collection.isSession {
                (item, isNew) = try storeCall {
                    try sessionItems.create(
                        of: collection.owner, label: label, attributes: attributes, secret: secret, contentType: type, replace: replace)
                }
            } else {
                (item, isNew) = try storeCall {
                    try store.createSecretServiceItem(
                        in: collection.reach, label: label, attributes: attributes, secret: secret, contentType: type, replace: replace)
                }
            }
            let path = collection.itemPath(item.id)
            try reply(call) { writer in
                writer.append(.objectPath(path))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
            emit(isNew ? "ItemCreated" : "ItemChanged", item: path, in: collection, scope: caller.scope)
        case "Delete":
            _ = try call.expect("")
            // The login collection — or whichever the default alias names — holds what every
            // program of the scope stored: only the user deletes it, through a prompt.
            let isDefault = try aliases(caller)["default"] == collection.name
            if collection.isLogin || isDefault {
                let prompt = newPrompt(.delete(collection.name), caller)
                return try reply(call) { $0.append(.objectPath(prompt)) }
            }
            try deleteCollection(collection, caller)
            try reply(call) { $0.append(.objectPath(SecretObjectPath.noPrompt)) }
        default:
            throw BusError.unknownMethod(Introspection.collection, call.member)
        }
    }

    /// Deletes `collection` and exactly its items: a created collection's access group in one
    /// transaction; the session collection's items in memory; the login collection's items one
    /// by one (each deleted or intact, whenever securityd stops) — it stays, empty.
    private func deleteCollection(_ collection: ScopedCollection, _ caller: Connection) throws {
        let owner = collection.owner
        if collection.isLogin {
            try requireUnlocked(collection)
            for (id, _) in try storeCall({ try store.secretServiceItemIDs(in: collection.reach, matching: [:]) }) {
                try storeCall { try store.deleteSecretServiceItem(id: id, in: collection.reach) }
                emit("ItemDeleted", item: collection.itemPath(id), in: collection, scope: caller.scope)
            }
            return
        }
        if collection.isSession {
            for id in sessionItems.deleteAll(of: owner) {
                emit("ItemDeleted", item: collection.itemPath(id), in: collection, scope: caller.scope)
            }
            return
        }
        try storeCall { try store.deleteSecretServiceCollection(owner: caller.scope, name: collection.name) }
        lockedCollections.remove(lockKey(collection))
        forgetCollections(of: owner)
        announceCollections("CollectionDeleted", collection.path, caller)
    }

    // MARK: - org.freedesktop.Secret.Item

    private func itemMethod(_ call: Call, id: String, in collection: ScopedCollection, _ caller: Connection) throws {
        let path = collection.itemPath(id)
        switch call.member {
        case "GetSecret":
            let session = try session(try call.expect("o").objectPath(), caller)
            let (secret, item) = try self.secret(id, in: collection)
            try reply(call, sensitive: true) { writer in
                append(secret, contentType: item.contentType, session: session, to: &writer)
            }
        case "SetSecret":
            let reader = try call.expect("(oayays)")
            sd_bus_message_sensitive(call.message)
            let (sessionPath, parameters, value, contentType) = try reader.secretStruct()
            let secret = try decode(sessionPath, parameters, value, caller)
            try update(id, in: collection, secret: secret, contentType: contentType.isEmpty ? "text/plain" : contentType)
            try reply(call) { _ in }
            emit("ItemChanged", item: path, in: collection, scope: caller.scope)
        case "Delete":
            _ = try call.expect("")
            try requireUnlocked(collection)
            if collection.isSession {
                try storeCall { try sessionItems.delete(id, of: collection.owner) }
            } else {
                try storeCall { try store.deleteSecretServiceItem(id: id, in: collection.reach) }
            }
            try reply(call) { $0.append(.objectPath(SecretObjectPath.noPrompt)) }
            emit("ItemDeleted", item: path, in: collection, scope: caller.scope)
        default:
            throw BusError.unknownMethod(Introspection.item, call.member)
        }
    }

    // MARK: - org.freedesktop.Secret.Prompt

    private func promptMethod(_ call: Call, id: String, _ caller: Connection) throws {
        guard var prompt = caller.prompts[id] else { throw BusError.unknownObject(call.path) }
        switch call.member {
        case "Prompt":
            _ = try call.expect("s")
            try reply(call) { _ in }
            guard !prompt.asking else { return }
            let reason: String
            switch prompt.action {
            case .unlock(let objects):
                let needsUser = store.secretServiceIsLocked()
                    || objects.contains { path in (try? collection(containing: path, caller)).map { isLockedByRequest($0) } ?? false }
                guard unlocker != nil, needsUser else {
                    // Nothing to ask (no one can be asked here, or it was unlocked meanwhile).
                    finish(id, of: call.sender, confirmed: !needsUser)
                    return
                }
                reason = "Unlock the keychain for the Secret Service (\(caller.scope))"
            case .delete(let name):
                guard unlocker != nil else { return finish(id, of: call.sender, confirmed: false) }
                reason = "Delete every item of the collection \(name) of the Secret Service (\(caller.scope))"
            }
            guard let unlocker else { return }
            prompt.asking = true
            caller.prompts[id] = prompt
            let finished = finishedPrompts
            let wake = self.wake
            let sender = call.sender
            DispatchQueue.global().async {
                let confirmed = (try? unlocker(reason)) != nil
                finished.withLock { $0.append(FinishedPrompt(connection: sender, id: id, confirmed: confirmed)) }
                trousseau_bus_wake(wake)
            }
        case "Dismiss":
            _ = try call.expect("")
            try reply(call) { _ in }
            finish(id, of: call.sender, confirmed: false)
        default:
            throw BusError.unknownMethod(Introspection.prompt, call.member)
        }
    }

    private func newPrompt(_ action: PendingPrompt.Action, _ caller: Connection) -> String {
        counter += 1
        let id = "p\(counter)"
        caller.prompts[id] = PendingPrompt(action: action)
        return SecretObjectPath.promptPath(id)
    }

    /// Ends prompt `id` of connection `sender` with `Completed`. An unlock the user confirmed
    /// unlocks the collections asked for and completes with every object asked for that is the
    /// caller's (libsecret reads only this result); a confirmed delete deletes. Otherwise it is
    /// dismissed (with an empty array of the type Unlock's callers expect) and nothing changes.
    /// A prompt whose connection has gone, or that was dismissed meanwhile, is forgotten silently.
    private func finish(_ id: String, of sender: String, confirmed: Bool) {
        guard let connection = connections[sender], let prompt = connection.prompts.removeValue(forKey: id) else { return }
        let path = SecretObjectPath.promptPath(id)
        switch prompt.action {
        case .unlock(let objects):
            var unlocked: [String] = []
            if confirmed {
                for object in objects where (try? exists(object, connection)) == true {
                    if let collection = try? collection(containing: object, connection), lockedCollections.remove(lockKey(collection)) != nil {
                        announce([("Locked", .bool(false))], of: collection, scope: connection.scope)
                    }
                    unlocked.append(object)
                }
            }
            emitCompleted(path: path, to: sender, dismissed: !confirmed, result: .objectPaths(unlocked))
        case .delete(let name):
            var deleted = false
            if confirmed, let collection = try? collections(connection).first(where: { $0.name == name }) {
                deleted = (try? deleteCollection(collection, connection)) != nil
            }
            emitCompleted(path: path, to: sender, dismissed: !deleted, result: .string(""))
        }
    }

    private func completeFinishedPrompts() {
        for finished in finishedPrompts.withLock({ finished in defer { finished = [] }; return finished }) {
            finish(finished.id, of: finished.connection, confirmed: finished.confirmed)
        }
    }

    // MARK: - org.freedesktop.impl.portal.Secret

    private func portal(_ call: Call) throws {
        guard let bus else { throw BusError.failed("not connected") }
        switch (call.interface ?? SecretPortal.interface, call.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            _ = try call.expect("")
            try reply(call) { $0.append(.string(Introspection.document(interfaces: [SecretPortal.interface], children: []))) }
        case ("org.freedesktop.DBus.Properties", "Get"):
            let reader = try call.expect("ss")
            guard try reader.string() == SecretPortal.interface, try reader.string() == "version" else { throw BusError.unknownProperty("") }
            try reply(call) { $0.appendVariant(.uint32(1)) }
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            guard try call.expect("s").string() == SecretPortal.interface else { throw BusError.invalidArgs("No such interface here") }
            try reply(call) { $0.appendProperties([("version", .uint32(1))]) }
        case (SecretPortal.interface, "RetrieveSecret"):
            let reader = try call.expect("osha{sv}")
            _ = try reader.objectPath()
            let appID = try reader.string()
            let fd = try reader.fileDescriptor()
            guard scopes.isPortal(call.sender, bus: bus) else {
                throw BusError.accessDenied("only xdg-desktop-portal retrieves applications' secrets")
            }
            // Response 2: failed (no valid app id: a host app, which has no sandbox to key).
            var response: UInt32 = 2
            if SecretScope.flatpak(appID) != nil, !store.secretServiceIsLocked(),
                let secret = try? SecretPortal.secret(for: appID, in: store), SecretPortal.write(secret, to: fd)
            {
                response = 0
            }
            try reply(call) { writer in
                writer.append(.uint32(response))
                writer.appendProperties([])
            }
        default:
            throw BusError.unknownMethod(call.interface ?? "", call.member)
        }
    }

    // MARK: - Properties

    private func properties(_ call: Call, _ object: SecretObjectPath, _ caller: Connection) throws {
        switch call.member {
        case "Get":
            let reader = try call.expect("ss")
            let interface = try reader.string()
            let name = try reader.string()
            let all = try propertyValues(object, interface: interface, caller)
            guard let value = all.first(where: { $0.0 == name })?.1 else { throw BusError.unknownProperty(name) }
            try reply(call) { $0.appendVariant(value) }
        case "GetAll":
            let interface = try call.expect("s").string()
            let all = try propertyValues(object, interface: interface, caller)
            try reply(call) { $0.appendProperties(all) }
        case "Set":
            let reader = try call.expect("ssv")
            let interface = try reader.string()
            let name = try reader.string()
            try setProperty(object, interface: interface, name: name, reader: reader, caller)
            try reply(call) { _ in }
        default:
            throw BusError.unknownMethod("org.freedesktop.DBus.Properties", call.member)
        }
    }

    private func propertyValues(_ object: SecretObjectPath, interface: String, _ caller: Connection) throws -> [(String, BusValue)] {
        switch (object, interface) {
        case (.service, Introspection.service), (.service, ""):
            return [("Collections", .objectPaths(try collections(caller).map(\.path)))]
        case (.collection(let place), Introspection.collection), (.collection(let place), ""):
            let collection = try collection(place, caller, path: "")
            let locked = isLocked(collection)
            let all = locked ? [] : try items(in: collection, matching: [:])
            let modified = ([collection.modified] + all.map(\.modified)).map { UInt64(max(0, $0.timeIntervalSince1970)) }.max() ?? 0
            let ids = locked ? try itemIDs(in: collection, matching: [:]) : all.map(\.id)
            return [
                ("Items", .objectPaths(ids.map { collection.itemPath($0) })),
                ("Label", .string(collection.label)),
                ("Locked", .bool(locked)),
                ("Created", .uint64(UInt64(max(0, collection.created.timeIntervalSince1970)))),
                ("Modified", .uint64(modified)),
            ]
        case (.item(let place, let id), Introspection.item), (.item(let place, let id), ""):
            let collection = try collection(place, caller, path: "")
            guard !isLocked(collection) else {
                // Its label and attributes are encrypted until the keychain is unlocked.
                return [("Locked", .bool(true)), ("Attributes", .attributes([:])), ("Label", .string("")), ("Created", .uint64(0)), ("Modified", .uint64(0))]
            }
            guard let item = try item(id, in: collection) else { throw BusError.noSuchObject(collection.itemPath(id)) }
            return [
                ("Locked", .bool(false)),
                ("Attributes", .attributes(item.attributes)),
                ("Label", .string(item.label)),
                ("Created", .uint64(UInt64(max(0, item.created.timeIntervalSince1970)))),
                ("Modified", .uint64(UInt64(max(0, item.modified.timeIntervalSince1970)))),
            ]
        case (.session, Introspection.session), (.prompt, Introspection.prompt), (.node, _), (.session, ""), (.prompt, ""):
            return []
        default:
            throw BusError.invalidArgs("No interface \(interface) here")
        }
    }

    private func setProperty(_ object: SecretObjectPath, interface: String, name: String, reader: BusReader, _ caller: Connection) throws {
        guard (try propertyValues(object, interface: interface, caller)).contains(where: { $0.0 == name }) else {
            throw BusError.unknownProperty(name)
        }
        switch (object, name) {
        case (.item(let place, let id), "Label"):
            guard try reader.variantContents() == "s" else { throw BusError.invalidArgs("Label is a string") }
            try reader.enter("v", "s")
            let label = try reader.string()
            let collection = try collection(place, caller, path: "")
            try update(id, in: collection, label: label)
            emit("ItemChanged", item: collection.itemPath(id), in: collection, scope: caller.scope)
        case (.item(let place, let id), "Attributes"):
            guard try reader.variantContents() == "a{ss}" else { throw BusError.invalidArgs("Attributes is an a{ss}") }
            try reader.enter("v", "a{ss}")
            let attributes = try reader.stringDictionary()
            let collection = try collection(place, caller, path: "")
            try update(id, in: collection, attributes: attributes)
            emit("ItemChanged", item: collection.itemPath(id), in: collection, scope: caller.scope)
        case (.collection(let place), "Label"):
            guard try reader.variantContents() == "s" else { throw BusError.invalidArgs("Label is a string") }
            try reader.enter("v", "s")
            let label = try reader.string()
            let collection = try collection(place, caller, path: "")
            // Each scope's collection labels are its own: another scope's login is another row.
            if collection.isSession {
                sessionItems.labels[collection.owner] = label
                forgetCollections(of: collection.owner)
            } else {
                try storeCall {
                    try store.setSecretServiceCollectionLabel(owner: caller.scope, name: collection.name, label: label, created: collection.created)
                }
                forgetCollections(of: collection.owner)
            }
            announce([("Label", .string(label))], of: collection, scope: caller.scope)
        default:
            throw BusError.propertyReadOnly(name)
        }
    }

    // MARK: - Searches across the caller's collections

    /// The caller's items matching `attributes` in every collection: those of unlocked
    /// collections, and the paths whose tokens match in locked ones (confirmed once they are
    /// unlocked): (unlocked, locked). The keychain's collections are one statement.
    private func search(_ caller: Connection, _ attributes: [String: String]) throws -> ([String], [String]) {
        let all = try collections(caller)
        let keychainLocked = store.secretServiceIsLocked()
        var unlocked: [String] = []
        var locked: [String] = []
        var byGroup: [String: ScopedCollection] = [:]
        var openReaches: [AccessGroups] = []
        var closedReaches: [AccessGroups] = []
        for collection in all where !collection.isSession {
            for group in collection.groups { byGroup[group] = collection }
            if isLocked(collection, keychainLocked: keychainLocked) { closedReaches.append(collection.reach) } else { openReaches.append(collection.reach) }
        }
        let (openGroups, closedGroups) = (AccessGroups.union(openReaches), AccessGroups.union(closedReaches))
        if !openGroups.groups.isEmpty {
            for item in try storeCall({ try store.secretServiceItems(in: openGroups, matching: attributes) }) {
                if let collection = byGroup[item.accessGroup] { unlocked.append(collection.itemPath(item.id)) }
            }
        }
        if !closedGroups.groups.isEmpty {
            for (id, group) in try storeCall({ try store.secretServiceItemIDs(in: closedGroups, matching: attributes) }) {
                if let collection = byGroup[group] { locked.append(collection.itemPath(id)) }
            }
        }
        if let session = all.first(where: \.isSession) {
            let paths = sessionItems.items(of: session.owner, matching: attributes).map { session.itemPath($0.id) }
            if isLocked(session, keychainLocked: keychainLocked) { locked += paths } else { unlocked += paths }
        }
        return (unlocked, locked)
    }

    /// Whether `path` is an existing collection or item of the caller's.
    private func exists(_ path: String, _ caller: Connection) throws -> Bool {
        switch SecretObjectPath(path) {
        case .collection(let place)?: return (try? collection(place, caller, path: path)) != nil
        case .item(let place, let id)?:
            guard let collection = try? collection(place, caller, path: path) else { return false }
            return try itemExists(id, in: collection)
        default: return false
        }
    }

    /// Runs a store operation, turning its OSStatus errors into D-Bus errors (without secrets:
    /// the store's messages never carry one).
    func storeCall<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeychainError {
            switch error.status {
            case OSStatusCode.itemNotFound: throw BusError.noSuchObject("the item")
            case OSStatusCode.interactionNotAllowed, OSStatusCode.authFailed: throw BusError.isLocked(error.description)
            case OSStatusCode.param: throw BusError.invalidArgs(error.description)
            default: throw BusError.failed(error.description)
            }
        }
    }

    // MARK: - Secrets on the wire

    private func session(_ path: String, _ caller: Connection) throws -> (path: String, session: SecretSession) {
        guard case .session(let id)? = SecretObjectPath(path), let session = caller.sessions[id] else { throw BusError.noSession(path) }
        return (path, session)
    }

    private func decode(_ sessionPath: String, _ parameters: [UInt8], _ value: [UInt8], _ caller: Connection) throws -> SecretBytes {
        let session = try session(sessionPath, caller).session
        do {
            return try session.decode(parameters: parameters, value: value)
        } catch {
            throw Self.busError(error)
        }
    }

    private func append(_ secret: SecretBytes, contentType: String, session: (path: String, session: SecretSession), to writer: inout BusWriter) {
        let (parameters, value) = session.session.encode(secret)
        writer.open("r", "oayays")
        writer.append(.objectPath(session.path))
        writer.append(bytes: parameters)
        writer.append(bytes: value)
        writer.append(.string(contentType))
        writer.close()
    }

    static func busError(_ failure: SecretSession.Failure) -> BusError {
        switch failure {
        case .notSupported(let name): .notSupported("Algorithm \(name) is not supported")
        case .invalidPublicKey: .invalidArgs("the public key is not a valid key of the group")
        case .invalidParameters: .invalidArgs("the secret's parameters are not this session's (a 16-byte IV, or nothing for plain)")
        case .invalidValue: .invalidArgs("the secret's value cannot be decrypted in this session")
        case .unavailable: .failed("cannot make a key pair")
        }
    }

    // MARK: - Replies and signals

    private func reply(_ call: Call, sensitive: Bool = false, _ body: (inout BusWriter) -> Void) throws {
        var message: OpaquePointer?
        guard sd_bus_message_new_method_return(call.message, &message) >= 0, let message else { throw BusError.failed("out of memory") }
        defer { sd_bus_message_unref(message) }
        if sensitive { sd_bus_message_sensitive(message) }
        var writer = BusWriter(message)
        body(&writer)
        guard !writer.failed else { throw BusError.failed("cannot build the reply") }
        _ = sd_bus_send(nil, message, nil)
    }

    /// A collection's signal about one of its items, sent to each connection of `scope` by
    /// name: other scopes never learn that an item came or went.
    private func emit(_ member: String, item path: String, in collection: ScopedCollection, scope: SecretScope) {
        emit(member, interface: Introspection.collection, on: collection.path, object: path, scope: scope)
    }

    /// Signal `member` of `interface` at `path` carrying `object`, to each connection of `scope`
    /// (every connection of the user's is placed in its scope as it appears on the bus).
    private func emit(_ member: String, interface: String, on path: String, object: String, scope: SecretScope) {
        for (name, connection) in connections where connection.scope == scope {
            send(signal: member, interface: interface, path: path, to: name) {
                $0.append(.objectPath(object))
            }
        }
    }

    /// A collection's properties changed: `PropertiesChanged` on it (what libsecret's proxies
    /// read `Locked` and `Label` from) and the service's `CollectionChanged`, to its scope.
    private func announce(_ changed: [(String, BusValue)], of collection: ScopedCollection, scope: SecretScope) {
        propertiesChanged(changed, interface: Introspection.collection, at: collection.path, scope: scope)
        emit("CollectionChanged", interface: Introspection.service, on: SecretObjectPath.root, object: collection.path, scope: scope)
    }

    /// The service's `Collections` changed (one was created or deleted), or `member`:
    /// `CollectionCreated`/`CollectionDeleted` for `path`, and the property's new value.
    private func announceCollections(_ member: String, _ path: String, _ caller: Connection) {
        emit(member, interface: Introspection.service, on: SecretObjectPath.root, object: path, scope: caller.scope)
        guard let all = try? collections(caller) else { return }
        propertiesChanged([("Collections", .objectPaths(all.map(\.path)))], interface: Introspection.service, at: SecretObjectPath.root, scope: caller.scope)
    }

    /// `PropertiesChanged` of `interface` at `path`, to each connection of `scope`.
    private func propertiesChanged(_ changed: [(String, BusValue)], interface: String, at path: String, scope: SecretScope) {
        for (name, connection) in connections where connection.scope == scope {
            send(signal: "PropertiesChanged", interface: "org.freedesktop.DBus.Properties", path: path, to: name) { writer in
                writer.append(.string(interface))
                writer.appendProperties(changed)
                writer.open("a", "s")
                writer.close()
            }
        }
    }

    private func emitCompleted(path: String, to destination: String, dismissed: Bool, result: BusValue) {
        send(signal: "Completed", interface: Introspection.prompt, path: path, to: destination) { writer in
            writer.append(.bool(dismissed))
            writer.appendVariant(result)
        }
    }

    private func send(signal: String, interface: String, path: String, to destination: String, _ body: (inout BusWriter) -> Void) {
        guard let bus else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, signal) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        guard sd_bus_message_set_destination(message, destination) >= 0 else { return }
        var writer = BusWriter(message)
        body(&writer)
        if !writer.failed { _ = sd_bus_send(bus, message, nil) }
    }
}
