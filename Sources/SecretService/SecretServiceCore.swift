import Dispatch
import FoundationEssentials
import KeychainCallers
import KeychainModel
import KeychainStore

/// Who a bus connection is, as the bus recorded it: the core's only question to the bus.
protocol BusPeers: AnyObject {
    /// The scope of connection `name`, or an error that refuses it.
    func scope(of name: String) throws -> SecretScope
    /// Whether connection `name` is xdg-desktop-portal.
    func isPortal(_ name: String) -> Bool
}

/// A signal to send to one connection.
struct BusSignalMessage {
    let destination: String
    let path: String
    let interface: String
    let member: String
    let values: [BusValue]
}

/// The freedesktop Secret Service, without a bus: calls in, replies and signals out. Its
/// objects are resolved per caller (``SecretScope``), its items are keychain items
/// (``KeychainStore``'s Secret Service operations); each interface is a table
/// (``BusInterface``) in a file of its own, which routes, checks and introspects it.
///
/// Confined to one thread (the bus adapter's): calls are handled one at a time, in order.
/// Tests drive it directly (``handle(_:)``), the adapter (``SecretServiceProvider``) from
/// sd-bus.
final class SecretServiceCore {
    let store: KeychainStore
    weak var peers: (any BusPeers)?
    private var connections: [String: Connection] = [:]
    private var counter = 0
    /// When this service started: the login collection's creation date until its label is set.
    let started = Date()
    let unlocker: SecretUnlocker?
    /// Asks the bus thread to call ``completeFinishedPrompts()`` (from any thread).
    private let wakeUp: @Sendable () -> Void
    private let finishedPrompts = BlockingMutex<[FinishedPrompt]>([])
    /// Signals of the call being handled, sent with its reply.
    private var outgoing: [BusSignalMessage] = []
    /// Whether the method being handled sends its signals first.
    private var signalsFirst = false
    /// Work that waits until the reply is on its way (``afterReply(_:)``).
    private var deferred: [() -> Void] = []
    /// Each scope's collections and aliases as stored (by owner), read once and dropped
    /// whenever this service changes them: a search needs no read of its own to find them.
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

    /// - Parameters:
    ///   - unlocker: asks the user for the keychain's passcode and unlocks with it; it
    ///     throws when no one can be asked or the user cancels. Runs on a thread of its own.
    ///   - wakeUp: makes the bus thread call ``completeFinishedPrompts()``.
    init(store: KeychainStore, unlocker: SecretUnlocker?, wakeUp: @escaping @Sendable () -> Void) {
        self.store = store
        self.unlocker = unlocker
        self.wakeUp = wakeUp
    }

    // MARK: - Connections

    func connection(for sender: String) throws -> Connection {
        if let known = connections[sender] { return known }
        guard let peers else { throw BusError.failed("not connected") }
        let connection = Connection(scope: try peers.scope(of: sender))
        connections[sender] = connection
        return connection
    }

    /// A connection that appeared on the bus (or was there when the service started): its
    /// scope is known at once, so that it receives its scope's signals before it ever calls.
    /// One that cannot be placed (another user's, a refused sandbox) receives nothing.
    func connectionAppeared(_ name: String) {
        guard name.hasPrefix(":"), connections[name] == nil else { return }
        _ = try? connection(for: name)
    }

    /// A connection left the bus: its sessions and prompts end.
    func connectionVanished(_ name: String) {
        connections[name] = nil
    }

    // MARK: - Dispatch

    /// Interfaces every object has, before its own.
    static let standardInterfaces = [introspectableInterface, propertiesInterface, peerInterface]

    static func interfaces(of object: SecretObjectPath) -> [BusInterface] {
        switch object {
        case .service: [serviceInterface]
        case .collection: [collectionInterface]
        case .item: [itemInterface]
        case .session: [sessionInterface]
        case .prompt: [promptInterface]
        case .portal: [SecretPortal.interface]
        case .node: []
        }
    }

    private static let everyObjectsInterfaces: [SecretObjectPath.Kind: [BusInterface]] = Dictionary(
        uniqueKeysWithValues: SecretObjectPath.Kind.allCases.map { ($0, standardInterfaces + interfaces(of: $0.example)) })

    /// The standard interfaces and the object's own, in that order.
    static func allInterfaces(of object: SecretObjectPath) -> [BusInterface] {
        everyObjectsInterfaces[object.kind] ?? standardInterfaces
    }

    /// Serves one call: its reply, and the signals to send with it.
    func handle(_ call: BusCall) -> BusResponse {
        outgoing = []
        signalsFirst = false
        let reply: BusReply
        do {
            reply = try dispatch(call)
        } catch let error as BusError {
            reply = .error(error)
        } catch {
            reply = .error(.failed("internal error"))
        }
        defer { outgoing = [] }
        return BusResponse(reply: reply, signals: outgoing, signalsFirst: signalsFirst)
    }

    private func dispatch(_ call: BusCall) throws -> BusReply {
        guard let object = SecretObjectPath(call.path) else { return try introspectAbove(call) }
        let interfaces = Self.allInterfaces(of: object)
        let named = call.interface ?? interfaces.first { $0.method(call.member) != nil }?.name ?? ""
        let caller: Connection? = object == .portal ? nil : try connection(for: call.sender)
        // Objects outside the caller's view are missing, whatever the interface. GetSecret —
        // half of every lookup — finds its item in the one read that opens it, and answers
        // NoSuchObject itself when there is none.
        if let caller, !(named == Self.itemInterface.name && call.member == "GetSecret") {
            try requireExists(object, for: caller, path: call.path)
        }
        guard let method = interfaces.first(where: { $0.name == named })?.method(call.member) else {
            throw BusError.unknownMethod(named, call.member)
        }
        guard call.signature == method.inputSignature else {
            throw BusError.invalidArgs("\(call.member) takes (\(method.inputSignature)), not (\(call.signature))")
        }
        signalsFirst = method.signalsFirst
        let values = try method.handler(self, BusInvocation(call: call, object: object, connection: caller))
        return .values(values, sensitive: method.sensitiveReply)
    }

    /// "/", "/org", "/org/freedesktop": introspectable, one child each on the way to the
    /// service; any other path that names nothing here is NoSuchObject — the error clients
    /// map to "no such item" (secretstorage 3.3.3 knows no other).
    private func introspectAbove(_ call: BusCall) throws -> BusReply {
        let root = SecretObjectPath.root
        let above = root.hasPrefix(call.path == "/" ? "/" : call.path + "/")
        guard above, call.interface ?? Self.introspectableInterface.name == Self.introspectableInterface.name, call.member == "Introspect" else {
            throw BusError.noSuchObject(call.path)
        }
        let child = root.dropFirst(call.path == "/" ? 1 : call.path.count + 1).split(separator: "/").first.map(String.init)
        return .values([.string(Self.introspection(of: [], children: child.map { [$0] } ?? []))], sensitive: false)
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
        case .service, .node, .portal:
            break
        }
    }

    func nextID(_ prefix: String) -> String {
        counter += 1
        return prefix + String(counter)
    }

    // MARK: - Store calls and secrets

    /// Runs a store operation, turning its OSStatus errors into D-Bus errors (without secrets:
    /// the store's messages never carry one).
    /// Its result is the body's, which a caller may not need (a deletion's count).
    @discardableResult
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

    func session(_ path: String, _ caller: Connection) throws -> (path: String, session: SecretSession) {
        guard case .session(let id)? = SecretObjectPath(path), let session = caller.sessions[id] else { throw BusError.noSession(path) }
        return (path, session)
    }

    /// The plaintext of a Secret struct `(oayays)` a client sent, and its content type.
    func secret(from value: BusValue, _ caller: Connection) throws -> (secret: SecretBytes, contentType: String) {
        let (sessionPath, parameters, value, contentType) = try value.secretStruct()
        let session = try session(sessionPath, caller).session
        do {
            return (try session.decode(parameters: parameters, value: value), contentType.isEmpty ? "text/plain" : contentType)
        } catch {
            throw Self.busError(error)
        }
    }

    /// A Secret struct `(oayays)` carrying `secret` in `session`.
    func secretStruct(_ secret: SecretBytes, contentType: String, session: (path: String, session: SecretSession)) -> BusValue {
        let (parameters, value) = session.session.encode(secret)
        return .structure([.objectPath(session.path), .bytes(parameters), .bytes(value), .string(contentType)])
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

    // MARK: - Signals

    /// Runs `work` once the reply of the call being handled is sent: what only signals need
    /// (re-reading the scope's collections for `Collections`) does not delay the caller.
    func afterReply(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    /// Runs the work deferred by the last call: the signals it makes, to send now.
    func runAfterReply() -> [BusSignalMessage] {
        outgoing = []
        defer { outgoing = [] }
        let work = deferred
        deferred = []
        for item in work { item() }
        return outgoing
    }

    /// Queues a signal: sent with the reply of the call being handled.
    func send(_ member: String, interface: String, path: String, to destination: String, _ values: [BusValue]) {
        outgoing.append(BusSignalMessage(destination: destination, path: path, interface: interface, member: member, values: values))
    }

    /// A collection's signal about one of its items, sent to each connection of `scope` by
    /// name: other scopes never learn that an item came or went.
    func emit(_ member: String, item path: String, in collection: ScopedCollection, scope: SecretScope) {
        emit(member, interface: Self.collectionInterface.name, on: collection.path, object: path, scope: scope)
    }

    /// Signal `member` of `interface` at `path` carrying `object`, to each connection of `scope`
    /// (every connection of the user's is placed in its scope as it appears on the bus).
    func emit(_ member: String, interface: String, on path: String, object: String, scope: SecretScope) {
        for (name, connection) in connections.sorted(by: { $0.key < $1.key }) where connection.scope == scope {
            send(member, interface: interface, path: path, to: name, [.objectPath(object)])
        }
    }

    /// A collection's properties changed: `PropertiesChanged` on it (what libsecret's proxies
    /// read `Locked` and `Label` from) and the service's `CollectionChanged`, to its scope.
    func announce(_ changed: [(String, BusValue)], of collection: ScopedCollection, scope: SecretScope) {
        propertiesChanged(changed, interface: Self.collectionInterface.name, at: collection.path, scope: scope)
        emit("CollectionChanged", interface: Self.serviceInterface.name, on: SecretObjectPath.root, object: collection.path, scope: scope)
    }

    /// The service's `Collections` changed (one was created or deleted), or `member`:
    /// `CollectionCreated`/`CollectionDeleted` for `path`, and the property's new value.
    func announceCollections(_ member: String, _ path: String, _ caller: Connection) {
        emit(member, interface: Self.serviceInterface.name, on: SecretObjectPath.root, object: path, scope: caller.scope)
        guard let all = try? collections(caller) else { return }
        propertiesChanged([("Collections", .objectPaths(all.map(\.path)))], interface: Self.serviceInterface.name, at: SecretObjectPath.root, scope: caller.scope)
    }

    /// `PropertiesChanged` of `interface` at `path`, to each connection of `scope`.
    private func propertiesChanged(_ changed: [(String, BusValue)], interface: String, at path: String, scope: SecretScope) {
        for (name, connection) in connections.sorted(by: { $0.key < $1.key }) where connection.scope == scope {
            send("PropertiesChanged", interface: Self.propertiesInterface.name, path: path, to: name,
                 [.string(interface), .properties(changed), .array(element: "s", [])])
        }
    }

    // MARK: - Prompts

    func newPrompt(_ action: PendingPrompt.Action, _ caller: Connection) -> String {
        let id = nextID("p")
        caller.prompts[id] = PendingPrompt(action: action)
        return SecretObjectPath.promptPath(id)
    }

    /// Asks the user on a thread of its own; the answer finishes prompt `id` on the bus thread.
    func ask(_ reason: String, prompt id: String, of sender: String, using unlocker: @escaping SecretUnlocker) {
        let finished = finishedPrompts
        let wakeUp = self.wakeUp
        DispatchQueue.global().async {
            let confirmed = (try? unlocker(reason)) != nil
            finished.withLock { $0.append(FinishedPrompt(connection: sender, id: id, confirmed: confirmed)) }
            wakeUp()
        }
    }

    /// Ends prompt `id` of connection `sender` with `Completed`. An unlock the user confirmed
    /// unlocks the collections asked for and completes with every object asked for that is the
    /// caller's (libsecret reads only this result); a confirmed delete deletes. Otherwise it is
    /// dismissed (with an empty array of the type Unlock's callers expect) and nothing changes.
    /// A prompt whose connection has gone, or that was dismissed meanwhile, is forgotten silently.
    func finish(_ id: String, of sender: String, confirmed: Bool) {
        guard let connection = connections[sender], let prompt = connection.prompts.removeValue(forKey: id) else { return }
        let path = SecretObjectPath.promptPath(id)
        let (dismissed, result): (Bool, BusValue)
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
            (dismissed, result) = (!confirmed, .objectPaths(unlocked))
        case .delete(let name):
            var deleted = false
            if confirmed, let collection = try? collections(connection).first(where: { $0.name == name }) {
                deleted = (try? deleteCollection(collection, connection)) != nil
            }
            (dismissed, result) = (!deleted, .string(""))
        }
        send("Completed", interface: Self.promptInterface.name, path: path, to: sender, [.bool(dismissed), .variant(result)])
    }

    /// Finishes the prompts whose asking ended elsewhere: the signals to send.
    func completeFinishedPrompts() -> [BusSignalMessage] {
        outgoing = []
        defer { outgoing = [] }
        for finished in finishedPrompts.withLock({ finished in defer { finished = [] }; return finished }) {
            finish(finished.id, of: finished.connection, confirmed: finished.confirmed)
        }
        return outgoing
    }

    // MARK: - Introspection

    /// The introspection data of an object with `interfaces` (after the standard ones) and
    /// `children`.
    static func introspection(of interfaces: [BusInterface], children: [String]) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        for interface in standardInterfaces + interfaces { xml += interface.introspection }
        for child in children { xml += " <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
