import Dispatch
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainStore
import KeychainSystem
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif
import SecretService
public import KeychainCallers

/// The freedesktop Secret Service of this daemon: served on a thread of its own over the
/// daemon's store, callers' signatures checked as for socket callers. Started by
/// `securityd --secret-service` (what the D-Bus activation file and the user unit run), or —
/// when this keychain's daemon already runs — by that process's ``Service/ServeSecretService``.
/// While it serves, the daemon does not exit when idle; when the bus goes away, the daemon
/// stops (its items are all on disk; the next session starts it again).
public final class SecretServiceFrontEnd: Sendable {
    private let store: KeychainStore
    private let identification: CallerIdentification
    private let unlock: @Sendable (SecretBytes) throws -> Void
    private let state = BlockingMutex<(serving: Bool, daemon: SecurityDaemon?)>((false, nil))
    /// Where its refusals are recorded (the dispatcher's, once it has one).
    private let activity = BlockingMutex<SecurityActivity?>(nil)

    /// - Parameter unlock: unlocks the keychain with a passcode the user typed (the enclave).
    public init(store: KeychainStore, identification: CallerIdentification, unlock: @escaping @Sendable (SecretBytes) throws -> Void) {
        self.store = store
        self.identification = identification
        self.unlock = unlock
    }

    /// Records refusals of bus calls beside the socket's (Keychain Access's activity view).
    func record(into activity: SecurityActivity) {
        self.activity.withLock { $0 = activity }
    }

    /// The daemon to hold open while serving, and to stop when the bus goes away.
    public func attach(_ daemon: SecurityDaemon) {
        let serving = state.withLock { state in
            state.daemon = daemon
            return state.serving
        }
        if serving { daemon.holdOpen() }
    }

    /// Serves the bus at `address` (the environment's session bus when nil) unless already
    /// serving; returns once the bus name is this process's.
    ///
    /// - Throws: errSecDuplicateItem when another process owns the name, errSecNotAvailable
    ///   when the bus cannot be reached.
    public func start(address: String?) throws {
        let alreadyServing = state.withLock { state in
            defer { state.serving = true }
            return state.serving
        }
        if alreadyServing { return }
        let identification = self.identification
        let unlock = self.unlock
        // The passcode is asked where every client asks it: the agent TROUSSEAU_PASSCODE_AGENT
        // names (in the daemon's environment: the bus's, for an activated one), else the
        // terminal, which a daemon does not have — then the prompt is dismissed at once.
        var portals = CallerIdentification.portalExecutables
        #if TROUSSEAU_TEST_HOOKS
        // Test builds: a stand-in for xdg-desktop-portal (a copy of Python the test runs).
        if let portal = TestHook.portalExecutable.value { portals.append(portal) }
        #endif
        let provider = SecretServiceProvider(
            store: store,
            scopes: CallerScopes(identification: identification, portalExecutables: portals),
            unlocker: { reason in try unlock(try PresenceFrontEnd().ask(for: .passcode, prompt: reason)) },
            refused: { [activity] refusal in
                activity.withLock { $0 }?.record(
                    "Secret Service " + refusal.method, program: ProcessExecutable.path(of: refusal.pid) ?? "pid \(refusal.pid)", pid: refusal.pid,
                    status: refusal.kind == .accessDenied ? .missingEntitlement : .interactionNotAllowed)
            })
        let outcome = BlockingMutex<String??>(nil)
        let ready = DispatchSemaphore(value: 0)
        let started = ThreadLauncher.detach { [self] in
            let reason = provider.run(address: address) { failure in
                outcome.withLock { $0 = .some(failure) }
                ready.signal()
            }
            DaemonLog.logger.warning("Secret Service: \(reason)")
            let daemon = state.withLock { state in
                state.serving = false
                return state.daemon
            }
            if outcome.withLock({ $0 == .some(nil) }) { daemon?.stop(reason: "Secret Service: \(reason)") }
        }
        guard started, ready.wait(timeout: .now() + .seconds(30)) == .success, case .some(let failure) = outcome.withLock({ $0 }) else {
            state.withLock { $0.serving = false }
            throw KeychainError(status: OSStatusCode.notAvailable, message: "the Secret Service could not start")
        }
        if let failure {
            throw KeychainError(
                status: failure.contains("another owner") ? OSStatusCode.duplicateItem : OSStatusCode.notAvailable,
                message: "Secret Service: \(failure)")
        }
        DaemonLog.logger.notice("Secret Service: serving org.freedesktop.secrets")
        state.withLock { $0.daemon }?.holdOpen()
    }
}

/// What `securityd --secret-service` does when this keychain's daemon already runs: asks it
/// to serve the bus, and exits once it does (the bus then counts the activation as done).
public enum SecretServiceHandoff {
    /// - Throws: the running daemon's refusal, or errSecIO when it cannot be reached.
    public static func ask(socket: String, busAddress: String) throws {
        let fd = try UnixSocket.stream()
        defer { close(fd) }
        let connected = try UnixSocket.connect(fd, to: socket)
        guard connected == 0 else { throw SystemCall.ioError("connect to \(socket)", errno: connected) }
        var request = ServiceWire.encode(Service.ServeSecretService(busAddress: busAddress))
        guard let response = try FrameIO.exchange(&request, on: fd, maximumSize: ServiceWire.maximumFrameSize) else {
            throw KeychainError(status: OSStatusCode.io, message: "the running securityd closed the connection")
        }
        var reader = ByteReader(response)
        _ = try ServiceWire.decodeResponse(&reader, to: Service.ServeSecretService.self)
    }

    /// The session bus of `environment`: DBUS_SESSION_BUS_ADDRESS, else the user's bus socket.
    public static func sessionBusAddress(_ environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        return environment["XDG_RUNTIME_DIR"].map { "unix:path=\($0)/bus" }
    }
}
