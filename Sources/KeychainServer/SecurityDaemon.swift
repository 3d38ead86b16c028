import Dispatch
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainProtocol
import KeychainSystem
public import KeychainCallers

#if canImport(Glibc)
import Glibc
#endif

/// securityd's serving loop: accepts connections, identifies each caller, answers its
/// requests in order on a thread of its own; the store serializes writes and reads in
/// parallel. A malformed, oversized or truncated frame gets an error reply and its
/// connection closed; everyone else is unaffected.
public final class SecurityDaemon: Sendable {
    private struct State: Sendable {
        var connections: Set<Int32> = []
        var stopping = false
        var lastActivity = ContinuousClock.now
        var heldOpen = false
    }

    private let listener: Int32
    private let dispatcher: RequestDispatcher
    private let identification: CallerIdentification
    private let idleExit: Duration?
    private let state = BlockingMutex(State())
    /// Connections beyond this wait in the listen backlog.
    static let maximumConnections = 256

    public init(listener: Int32, dispatcher: RequestDispatcher, identification: CallerIdentification, idleExit: Duration?) {
        self.listener = listener
        self.dispatcher = dispatcher
        self.identification = identification
        self.idleExit = idleExit
    }

    /// Serves until ``stop()`` (SIGTERM) or the idle time passes with no connection, then
    /// waits for in-flight requests to finish.
    public func run() {
        startIdleTimer()
        while true {
            // accept4 hides behind _GNU_SOURCE; the daemon forks nothing after startup, so
            // setting close-on-exec right after accept leaves no window that matters.
            let connection = accept(listener, nil, nil)
            if connection >= 0 { _ = fcntl(connection, F_SETFD, FD_CLOEXEC) }
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.withLock({ $0.stopping }) { break }
                if errno == EMFILE || errno == ENFILE {
                    usleep(10_000)
                    continue
                }
                DaemonLog.logger.error("accept failed: \(SystemCall.describe(errno)); stopping")
                break
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopping, state.connections.count < Self.maximumConnections else { return false }
                state.connections.insert(connection)
                state.lastActivity = .now
                return true
            }
            guard accepted else {
                DaemonLog.logger.warning("refused a connection: stopping or at \(Self.maximumConnections) connections")
                close(connection)
                continue
            }
            if !ThreadLauncher.detach({ [self] in self.serve(connection) }) {
                DaemonLog.logger.error("cannot start a thread for a connection: \(SystemCall.describe(errno))")
                finish(connection)
            }
        }
        drain()
    }

    /// Stops accepting and lets in-flight requests finish: each connection's read side is
    /// shut, so a thread waiting for its next request sees end of stream, and a thread in
    /// the middle of one still sends its answer.
    public func stop(reason: String) {
        DaemonLog.logger.notice("stopping: \(reason)")
        let open = state.withLock { state -> Set<Int32> in
            state.stopping = true
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in open { shutdown(connection, Int32(SHUT_RD)) }
    }

    private func drain() {
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ !$0.connections.isEmpty }), ContinuousClock.now < deadline {
            usleep(5_000)
        }
    }

    private func serve(_ connection: Int32) {
        defer { finish(connection) }
        let caller: Caller
        do {
            caller = try identification.identify(connection: connection)
        } catch let error as KeychainError {
            DaemonLog.logger.warning("refused a caller: \(error)")
            try? FrameIO.write(ServiceWire.failure(error), to: connection)
            return
        } catch {
            return
        }
        FrameIO.serve(
            connection, maximumSize: ServiceWire.maximumFrameSize,
            failure: { ServiceWire.failure($0) },
            closing: { DaemonLog.logger.warning("closed the connection of pid \(caller.pid): \($0)") }
        ) { reader in
            let response = try dispatcher.respond(to: &reader, from: caller)
            state.withLock { $0.lastActivity = .now }
            return response
        }
    }

    private func finish(_ connection: Int32) {
        state.withLock { state in
            state.connections.remove(connection)
            state.lastActivity = .now
        }
        close(connection)
    }

    /// Keeps the daemon from exiting when idle (it serves the Secret Service, whose
    /// clients are not connections of its socket).
    public func holdOpen() {
        state.withLock { $0.heldOpen = true }
    }

    private func startIdleTimer() {
        guard let idleExit else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        timer.setEventHandler { [self] in
            // A keychain that syncs stays up: its hints and rounds are nobody's connection.
            let idle = state.withLock { !$0.heldOpen && $0.connections.isEmpty && ContinuousClock.now - $0.lastActivity >= idleExit } && !dispatcher.syncing
            if idle {
                timer.cancel()
                stop(reason: "idle for \(idleExit)")
            }
        }
        timer.resume()
    }
}
