import CSystemd
import FoundationEssentials
import KeychainCallers
import KeychainModel
public import KeychainStore

#if canImport(Glibc)
import Glibc
#endif

/// The freedesktop Secret Service on the session bus, `org.freedesktop.secrets`: the sd-bus
/// adapter of ``SecretServiceCore``. It owns the connection, turns each method call into a
/// ``BusCall`` and the core's replies and signals into messages, and tells the core who
/// each connection is (``CallerScopes``); everything the service does is the core's.
///
/// Everything runs on the one thread that ``run(address:name:ready:)`` blocks (an sd-bus
/// connection is not thread-safe): messages are handled one at a time, in order.
public final class SecretServiceProvider: BusPeers, @unchecked Sendable {
    // @unchecked: every property below is touched only by the bus thread.
    private let scopes: CallerScopes
    private let core: SecretServiceCore
    private var bus: OpaquePointer?
    private var stopRequested: Int32 = 0
    /// Signalled when an unlock prompt finishes on its own thread.
    private let wake: Int32
    /// This provider's own unique name on the bus.
    private var uniqueName = ""
    private let refused: (@Sendable (SecretServiceRefusal) -> Void)?

    public static let busName = "org.freedesktop.secrets"

    /// - Parameters:
    ///   - unlocker: asks the user for the keychain's passcode (the agent or terminal of
    ///     ``PresenceFrontEnd``) and unlocks with it; it throws when no one can be asked or the
    ///     user cancels. Runs on a thread of its own, never the bus's.
    ///   - refused: told of each call answered AccessDenied or IsLocked (on the bus thread).
    public init(
        store: KeychainStore, scopes: CallerScopes, unlocker: SecretUnlocker? = nil, refused: (@Sendable (SecretServiceRefusal) -> Void)? = nil
    ) {
        self.scopes = scopes
        self.refused = refused
        let wake = trousseau_bus_wake_fd()
        self.wake = wake
        core = SecretServiceCore(store: store, unlocker: unlocker) { trousseau_bus_wake(wake) }
        core.peers = self
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
        // Every path, not only the service's tree: the core answers for paths that name
        // nothing (NoSuchObject) and introspects those above the tree.
        result = sd_bus_add_fallback(connection, nil, "/", Self.handleCall, context)
        guard result >= 0 else { return "cannot serve the Secret Service: \(Self.describe(result))" }
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
                appeared(String(cString: name))
                free(name)
                index += 1
            }
            free(names)
        }
        result = trousseau_bus_run(connection, &stopRequested, wake, Self.handleWake, context)
        return result == 0 ? "stopped" : "the session bus went away (\(Self.describe(result)))"
    }

    static func describe(_ negativeErrno: Int32) -> String {
        String(cString: strerror(-negativeErrno))
    }

    private func appeared(_ name: String) {
        if name != uniqueName { core.connectionAppeared(name) }
    }

    // MARK: - BusPeers

    func scope(of name: String) throws -> SecretScope {
        guard let bus else { throw BusError.failed("not connected") }
        return try scopes.scope(of: name, bus: bus)
    }

    func isPortal(_ name: String) -> Bool {
        guard let bus else { return false }
        return scopes.isPortal(name, bus: bus)
    }

    // MARK: - Messages

    private static let handleCall: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().handle(message)
        return 1
    }

    private static let handleWake: trousseau_bus_woken = { userdata in
        guard let userdata else { return }
        let provider = Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue()
        provider.send(provider.core.completeFinishedPrompts())
    }

    private static let handleNameOwnerChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata, let values = try? BusMessageCodec.read(message), values.count == 3,
            case .string(let name) = values[0], case .string(let oldOwner) = values[1], case .string(let newOwner) = values[2],
            name.hasPrefix(":")
        else { return 0 }
        let provider = Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue()
        if newOwner.isEmpty {
            provider.core.connectionVanished(name)
        } else if oldOwner.isEmpty {
            provider.appeared(name)
        }
        return 0
    }

    private func handle(_ message: OpaquePointer) {
        // A call may carry a secret (CreateItem, SetSecret): its memory is zeroed when freed.
        sd_bus_message_sensitive(message)
        let arguments: [BusValue]
        do {
            arguments = try BusMessageCodec.read(message)
        } catch {
            _ = trousseau_bus_reply_error(message, BusError.invalidArgs("").name, "malformed arguments")
            return
        }
        let string = { (value: UnsafePointer<CChar>?) in value.map { String(cString: $0) } }
        let call = BusCall(
            sender: string(sd_bus_message_get_sender(message)) ?? "", path: string(sd_bus_message_get_path(message)) ?? "",
            interface: string(sd_bus_message_get_interface(message)), member: string(sd_bus_message_get_member(message)) ?? "",
            arguments: arguments)
        let response = core.handle(call)
        if case .error(let error) = response.reply, let refused, let kind = SecretServiceRefusal.Kind(rawValue: error.name), let bus {
            var pid: Int32 = 0
            var uid: UInt32 = 0
            if trousseau_bus_peer(bus, call.sender, &pid, &uid) >= 0, pid > 0 { refused(SecretServiceRefusal(method: call.member, pid: pid, kind: kind)) }
        }
        if response.signalsFirst { send(response.signals) }
        switch response.reply {
        case .values(let values, let sensitive):
            var answer: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &answer) >= 0, let answer else {
                _ = trousseau_bus_reply_error(message, BusError.failed("").name, "out of memory")
                break
            }
            defer { sd_bus_message_unref(answer) }
            if sensitive { sd_bus_message_sensitive(answer) }
            if BusMessageCodec.write(values, to: answer) {
                _ = sd_bus_send(nil, answer, nil)
            } else {
                _ = trousseau_bus_reply_error(message, BusError.failed("").name, "cannot build the reply")
            }
        case .error(let error):
            _ = trousseau_bus_reply_error(message, error.name, error.message)
        }
        if !response.signalsFirst { send(response.signals) }
        send(core.runAfterReply())
    }

    private func send(_ signals: [BusSignalMessage]) {
        guard let bus else { return }
        for signal in signals {
            var message: OpaquePointer?
            guard sd_bus_message_new_signal(bus, &message, signal.path, signal.interface, signal.member) >= 0, let message else { continue }
            defer { sd_bus_message_unref(message) }
            guard sd_bus_message_set_destination(message, signal.destination) >= 0 else { continue }
            if BusMessageCodec.write(signal.values, to: message) { _ = sd_bus_send(bus, message, nil) }
        }
    }
}

/// A Secret Service call refused (for securityd's activity record): which method, which
/// process, why. Nothing of the call's arguments.
public struct SecretServiceRefusal: Sendable {
    public enum Kind: String, Sendable {
        /// A caller the bus cannot place, a refused sandbox, the portal's back end called by another.
        case accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        /// A secret read or an item made while the keychain is locked.
        case isLocked = "org.freedesktop.Secret.Error.IsLocked"
    }

    public let method: String
    public let pid: Int32
    public let kind: Kind
}
