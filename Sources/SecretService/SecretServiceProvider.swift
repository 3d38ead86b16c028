import CSecretBus
import Dispatch
import FoundationEssentials
public import KeychainModel
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
    private let created = UInt64(Date().timeIntervalSince1970)
    private var stopRequested: Int32 = 0
    private let unlocker: SecretUnlocker?
    /// Signalled when an unlock prompt finishes on its own thread.
    private let wake: Int32
    private let finishedPrompts = BlockingMutex<[FinishedPrompt]>([])

    /// One client connection's state: sessions and prompts die with it.
    final class Connection {
        let scope: SecretScope
        var sessions: [String: SecretSession] = [:]
        var prompts: [String: PendingPrompt] = [:]
        init(scope: SecretScope) { self.scope = scope }
    }

    /// An `Unlock`'s prompt: the objects it was asked for, and whether the user is being asked.
    struct PendingPrompt {
        var objects: [String]
        var asking = false
    }

    /// An unlock prompt whose asking ended (on another thread).
    struct FinishedPrompt: Sendable {
        let connection: String
        let id: String
        let unlocked: Bool
    }

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
        var result = trousseau_bus_open(address, &connection)
        guard result >= 0, let connection else { return "cannot connect to the session bus: \(Self.describe(result))" }
        bus = connection
        defer {
            sd_bus_flush_close_unref(connection)
            bus = nil
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        result = Self.root.withCString { sd_bus_add_fallback(connection, nil, $0, Self.handleCall, context) }
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
        owned()
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
        guard reader.signature == "sss", let name = try? reader.string(), let _ = try? reader.string(),
            let newOwner = try? reader.string()
        else { return 0 }
        if newOwner.isEmpty, name.hasPrefix(":") {
            Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().connections[name] = nil
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

    private func dispatch(_ call: Call) throws {
        if call.path == SecretPortal.path { return try portal(call) }
        guard let object = SecretObjectPath(call.path) else { throw BusError.unknownObject(call.path) }
        let caller = try connection(for: call.sender)
        let interface = call.interface ?? interfaces(of: object).first { methods(of: $0).contains(call.member) } ?? ""
        // Objects outside the caller's view are missing, whatever the interface. GetSecret —
        // half of every lookup — finds its item in the one read that opens it, and answers
        // UnknownObject itself when there is none.
        let opensItself: Bool
        if case .item = object, interface == Introspection.item, call.member == "GetSecret" { opensItself = true } else { opensItself = false }
        if !opensItself { try requireExists(object, for: caller, path: call.path) }
        switch interface {
        case "org.freedesktop.DBus.Introspectable":
            guard call.member == "Introspect" else { throw BusError.unknownMethod(interface, call.member) }
            _ = try call.expect("")
            try reply(call) { $0.append(.string(Introspection.document(interfaces: interfaces(of: object), children: children(of: object, caller)))) }
        case "org.freedesktop.DBus.Properties":
            try properties(call, object, caller)
        case Introspection.service where object == .service:
            try serviceMethod(call, caller)
        case Introspection.collection where object == .collection:
            try collectionMethod(call, caller)
        case Introspection.item:
            guard case .item(let id) = object else { throw BusError.unknownMethod(interface, call.member) }
            try itemMethod(call, id: id, caller)
        case Introspection.session:
            guard case .session(let id) = object, call.member == "Close" else { throw BusError.unknownMethod(interface, call.member) }
            _ = try call.expect("")
            caller.sessions[id] = nil
            try reply(call) { _ in }
        case Introspection.prompt:
            guard case .prompt(let id) = object else { throw BusError.unknownMethod(interface, call.member) }
            try promptMethod(call, id: id, caller)
        default:
            throw BusError.unknownMethod(interface, call.member)
        }
    }

    private func requireExists(_ object: SecretObjectPath, for caller: Connection, path: String) throws {
        switch object {
        case .item(let id):
            guard try storeCall({ try store.secretServiceItemExists(id: id, in: caller.scope.groups) }) else {
                throw BusError.unknownObject(path)
            }
        case .session(let id):
            guard caller.sessions[id] != nil else { throw BusError.unknownObject(path) }
        case .prompt(let id):
            guard caller.prompts[id] != nil else { throw BusError.unknownObject(path) }
        case .service, .collection, .node:
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
        case .node("collection"): [SecretObjectPath.collectionName]
        case .node("aliases"): ["default"]
        case .node("session"): caller.sessions.keys.sorted()
        case .node("prompt"): caller.prompts.keys.sorted()
        case .collection: (try? store.secretServiceItemIDs(in: caller.scope.groups, matching: [:])) ?? []
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
            _ = try reader.properties()
            let alias = try reader.string()
            guard ["", "default", "login"].contains(alias) else {
                throw BusError.notSupported("Trousseau keeps one collection, login, at the alias default; there is no alias \(alias)")
            }
            try reply(call) { writer in
                writer.append(.objectPath(SecretObjectPath.collectionPath))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
        case "SearchItems":
            let attributes = try call.expect("a{ss}").stringDictionary()
            let (unlocked, locked) = try search(caller, attributes)
            try reply(call) { writer in
                writer.append(.objectPaths(unlocked))
                writer.append(.objectPaths(locked))
            }
        case "Unlock", "Lock":
            let objects = try call.expect("ao").objectPaths()
            if call.member == "Lock" {
                // Items are AfterFirstUnlock: nothing a client asks locks them (docs/SECURITY.md).
                try reply(call) { writer in
                    writer.append(.objectPaths([]))
                    writer.append(.objectPath(SecretObjectPath.noPrompt))
                }
                return
            }
            guard !store.secretServiceIsLocked() else {
                let prompt = newPrompt(objects, caller)
                try reply(call) { writer in
                    writer.append(.objectPaths([]))
                    writer.append(.objectPath(prompt))
                }
                return
            }
            // Every object of the caller's that exists is unlocked (python keyring asks for
            // an already unlocked item every time; Chromium needs the collection back).
            let unlocked = try objects.filter { try exists($0, caller) }
            try reply(call) { writer in
                writer.append(.objectPaths(unlocked))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
        case "GetSecrets":
            let reader = try call.expect("aoo")
            let paths = try reader.objectPaths()
            let session = try session(try reader.objectPath(), caller)
            var secrets: [(String, SecretBytes, String)] = []
            for path in paths {
                guard case .item(let id)? = SecretObjectPath(path) else { continue }
                guard let (secret, item) = try? secret(id, caller) else { continue }
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
            let path = ["default", "login"].contains(name) ? SecretObjectPath.collectionPath : SecretObjectPath.noPrompt
            try reply(call) { $0.append(.objectPath(path)) }
        case "SetAlias":
            let reader = try call.expect("so")
            let name = try reader.string()
            let path = try reader.objectPath()
            guard name == "default", SecretObjectPath.isCollection(path) else {
                throw BusError.notSupported("the only alias is default, of the login collection")
            }
            try reply(call) { _ in }
        default:
            throw BusError.unknownMethod(Introspection.service, call.member)
        }
    }

    // MARK: - org.freedesktop.Secret.Collection

    private func collectionMethod(_ call: Call, _ caller: Connection) throws {
        switch call.member {
        case "SearchItems":
            let attributes = try call.expect("a{ss}").stringDictionary()
            let (unlocked, locked) = try search(caller, attributes)
            try reply(call) { $0.append(.objectPaths(unlocked + locked)) }
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
            try requireUnlocked()
            let (item, isNew) = try storeCall {
                try store.createSecretServiceItem(
                    in: caller.scope.defaultGroup, label: label, attributes: attributes, secret: secret,
                    contentType: contentType.isEmpty ? "text/plain" : contentType, replace: replace)
            }
            let path = SecretObjectPath.itemPath(item.id)
            try reply(call) { writer in
                writer.append(.objectPath(path))
                writer.append(.objectPath(SecretObjectPath.noPrompt))
            }
            emit(isNew ? "ItemCreated" : "ItemChanged", item: path, scope: caller.scope)
        case "Delete":
            _ = try call.expect("")
            for item in try items(caller, matching: [:]) {
                try storeCall { try store.deleteSecretServiceItem(id: item.id, in: caller.scope.groups) }
                emit("ItemDeleted", item: SecretObjectPath.itemPath(item.id), scope: caller.scope)
            }
            try reply(call) { $0.append(.objectPath(SecretObjectPath.noPrompt)) }
        default:
            throw BusError.unknownMethod(Introspection.collection, call.member)
        }
    }

    // MARK: - org.freedesktop.Secret.Item

    private func itemMethod(_ call: Call, id: String, _ caller: Connection) throws {
        let path = SecretObjectPath.itemPath(id)
        switch call.member {
        case "GetSecret":
            let session = try session(try call.expect("o").objectPath(), caller)
            let secret: SecretBytes
            let item: SecretServiceItem
            do {
                (secret, item) = try self.secret(id, caller)
            } catch let error as BusError where error.name == BusError.noSuchObject("").name {
                throw BusError.unknownObject(path)
            }
            try reply(call, sensitive: true) { writer in
                append(secret, contentType: item.contentType, session: session, to: &writer)
            }
        case "SetSecret":
            let reader = try call.expect("(oayays)")
            sd_bus_message_sensitive(call.message)
            let (sessionPath, parameters, value, contentType) = try reader.secretStruct()
            let secret = try decode(sessionPath, parameters, value, caller)
            try requireUnlocked()
            try storeCall {
                try store.updateSecretServiceItem(
                    id: id, in: caller.scope.groups, secret: secret, contentType: contentType.isEmpty ? "text/plain" : contentType)
            }
            try reply(call) { _ in }
            emit("ItemChanged", item: path, scope: caller.scope)
        case "Delete":
            _ = try call.expect("")
            try requireUnlocked()
            try storeCall { try store.deleteSecretServiceItem(id: id, in: caller.scope.groups) }
            try reply(call) { $0.append(.objectPath(SecretObjectPath.noPrompt)) }
            emit("ItemDeleted", item: path, scope: caller.scope)
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
            guard let unlocker, store.secretServiceIsLocked() else {
                // Nothing to ask (no one can be asked here, or the keychain was unlocked meanwhile).
                finish(id, of: call.sender, unlocked: !store.secretServiceIsLocked())
                return
            }
            prompt.asking = true
            caller.prompts[id] = prompt
            let finished = finishedPrompts
            let wake = self.wake
            let sender = call.sender
            let reason = "Unlock the keychain for the Secret Service (\(caller.scope))"
            DispatchQueue.global().async {
                let unlocked = (try? unlocker(reason)) != nil
                finished.withLock { $0.append(FinishedPrompt(connection: sender, id: id, unlocked: unlocked)) }
                trousseau_bus_wake(wake)
            }
        case "Dismiss":
            _ = try call.expect("")
            try reply(call) { _ in }
            finish(id, of: call.sender, unlocked: false)
        default:
            throw BusError.unknownMethod(Introspection.prompt, call.member)
        }
    }

    private func newPrompt(_ objects: [String], _ caller: Connection) -> String {
        counter += 1
        let id = "p\(counter)"
        caller.prompts[id] = PendingPrompt(objects: objects)
        return SecretObjectPath.promptPath(id)
    }

    /// Ends prompt `id` of connection `sender` with `Completed`: on success, not dismissed,
    /// with every object asked for that is the caller's (libsecret reads only this result);
    /// else dismissed, with an empty array of the type Unlock's callers expect. A prompt whose
    /// connection has gone, or that was dismissed meanwhile, is forgotten silently.
    private func finish(_ id: String, of sender: String, unlocked: Bool) {
        guard let connection = connections[sender], let prompt = connection.prompts.removeValue(forKey: id) else { return }
        let objects = unlocked ? prompt.objects.filter { (try? exists($0, connection)) == true } : []
        emitCompleted(path: SecretObjectPath.promptPath(id), to: sender, dismissed: !unlocked, result: .objectPaths(objects))
    }

    private func completeFinishedPrompts() {
        for finished in finishedPrompts.withLock({ finished in defer { finished = [] }; return finished }) {
            finish(finished.id, of: finished.connection, unlocked: finished.unlocked)
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
            try reply(call) { writer in
                writer.open("a", "{sv}")
                writer.open("e", "sv")
                writer.append(.string("version"))
                writer.appendVariant(.uint32(1))
                writer.close()
                writer.close()
            }
        case (SecretPortal.interface, "RetrieveSecret"):
            let reader = try call.expect("osha{sv}")
            _ = try reader.objectPath()
            let appID = try reader.string()
            let fd = try reader.fileDescriptor()
            guard try scopes.isPortal(call.sender, bus: bus) else {
                throw BusError.accessDenied("only xdg-desktop-portal retrieves applications' secrets")
            }
            // Response 2: failed (no valid app id: a host app, which has no sandbox to key).
            var response: UInt32 = 2
            if CallerScopes.isValidApplicationID(appID), !store.secretServiceIsLocked(),
                let secret = try? SecretPortal.secret(for: appID, in: store), SecretPortal.write(secret, to: fd)
            {
                response = 0
            }
            try reply(call) { writer in
                writer.append(.uint32(response))
                writer.open("a", "{sv}")
                writer.close()
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
            try reply(call) { writer in
                writer.open("a", "{sv}")
                for (name, value) in all {
                    writer.open("e", "sv")
                    writer.append(.string(name))
                    writer.appendVariant(value)
                    writer.close()
                }
                writer.close()
            }
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
        let locked = store.secretServiceIsLocked()
        switch (object, interface) {
        case (.service, Introspection.service), (.service, ""):
            return [("Collections", .objectPaths([SecretObjectPath.collectionPath]))]
        case (.collection, Introspection.collection), (.collection, ""):
            let all = locked ? [] : try items(caller, matching: [:])
            let modified = all.map { UInt64(max(0, $0.modified.timeIntervalSince1970)) }.max() ?? created
            let ids = locked ? try storeCall { try store.secretServiceItemIDs(in: caller.scope.groups, matching: [:]) } : all.map(\.id)
            return [
                ("Items", .objectPaths(ids.map(SecretObjectPath.itemPath))),
                ("Label", .string("Login")),
                ("Locked", .bool(locked)),
                ("Created", .uint64(created)),
                ("Modified", .uint64(modified)),
            ]
        case (.item, Introspection.item) where locked, (.item, "") where locked:
            // Its label and attributes are encrypted until the keychain is unlocked.
            return [("Locked", .bool(true)), ("Attributes", .attributes([:])), ("Label", .string("")), ("Created", .uint64(0)), ("Modified", .uint64(0))]
        case (.item(let id), Introspection.item), (.item(let id), ""):
            guard let item = try item(id, caller) else { throw BusError.unknownObject(SecretObjectPath.itemPath(id)) }
            return [
                ("Locked", .bool(locked)),
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
        case (.item(let id), "Label"):
            guard try reader.variantContents() == "s" else { throw BusError.invalidArgs("Label is a string") }
            try reader.enter("v", "s")
            let label = try reader.string()
            try requireUnlocked()
            try storeCall { try store.updateSecretServiceItem(id: id, in: caller.scope.groups, label: label) }
            emit("ItemChanged", item: SecretObjectPath.itemPath(id), scope: caller.scope)
        case (.item(let id), "Attributes"):
            guard try reader.variantContents() == "a{ss}" else { throw BusError.invalidArgs("Attributes is an a{ss}") }
            try reader.enter("v", "a{ss}")
            let attributes = try reader.stringDictionary()
            try requireUnlocked()
            try storeCall { try store.updateSecretServiceItem(id: id, in: caller.scope.groups, attributes: attributes) }
            emit("ItemChanged", item: SecretObjectPath.itemPath(id), scope: caller.scope)
        case (.collection, "Label"):
            // One collection for everyone: its name is not the caller's to change.
            throw BusError.accessDenied("the login collection's label does not change")
        default:
            throw BusError.propertyReadOnly(name)
        }
    }

    // MARK: - Items of the caller's scope

    private func items(_ caller: Connection, matching attributes: [String: String]) throws -> [SecretServiceItem] {
        try requireUnlocked()
        return try storeCall { try store.secretServiceItems(in: caller.scope.groups, matching: attributes) }
    }

    /// The caller's items matching `attributes` when the keychain is unlocked, else the paths
    /// their tokens match (confirmed once it is): (unlocked, locked).
    private func search(_ caller: Connection, _ attributes: [String: String]) throws -> ([String], [String]) {
        if store.secretServiceIsLocked() {
            let ids = try storeCall { try store.secretServiceItemIDs(in: caller.scope.groups, matching: attributes) }
            return ([], ids.map(SecretObjectPath.itemPath))
        }
        return (try items(caller, matching: attributes).map { SecretObjectPath.itemPath($0.id) }, [])
    }

    private func item(_ id: String, _ caller: Connection) throws -> SecretServiceItem? {
        if store.secretServiceIsLocked() { return nil }
        return try storeCall { try store.secretServiceItem(id: id, in: caller.scope.groups) }
    }

    private func secret(_ id: String, _ caller: Connection) throws -> (SecretBytes, SecretServiceItem) {
        try requireUnlocked()
        return try storeCall { try store.secretServiceSecret(id: id, in: caller.scope.groups) }
    }

    private func exists(_ path: String, _ caller: Connection) throws -> Bool {
        switch SecretObjectPath(path) {
        case .collection?: true
        case .item(let id)?: try store.secretServiceItemExists(id: id, in: caller.scope.groups)
        default: false
        }
    }

    private func requireUnlocked() throws {
        if store.secretServiceIsLocked() {
            throw BusError.isLocked("The keychain has not been unlocked since the machine started")
        }
    }

    /// Runs a store operation, turning its OSStatus errors into D-Bus errors (without secrets:
    /// the store's messages never carry one).
    private func storeCall<T>(_ body: () throws -> T) throws -> T {
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

    /// A collection signal, sent to each connection of `scope` by name: other scopes never
    /// learn that an item came or went.
    private func emit(_ member: String, item path: String, scope: SecretScope) {
        for (name, connection) in connections where connection.scope == scope {
            send(signal: member, interface: Introspection.collection, path: SecretObjectPath.collectionPath, to: name) {
                $0.append(.objectPath(path))
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
