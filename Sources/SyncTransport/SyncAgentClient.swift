import Dispatch
import FoundationEssentials
public import KeychainModel
public import KeychainSystem
public import SyncProtocol

#if canImport(Glibc)
public import Glibc
#endif

/// securityd's side of the sync agent (`trousseau-sync-agent`): the process that speaks
/// TCP, TLS, HTTP and WebSocket to the sync server, so that securityd, which holds the
/// keychain's keys, links no network stack and parses no byte of the network's framing (as
/// Apple's securityd leaves CloudKit's traffic to cloudd). The agent holds no key: it gets
/// each request's `Authorization` header, and the hint socket's while it is open.
///
/// The agent starts at the first request (never while sync is off) on a socketpair, and
/// exits when securityd closes it or exits. Requests are multiplexed on it: each carries an
/// id and waits for its answer; a hint may come at any time. When the agent dies, the
/// requests it had fail with `errSecNotAvailable` and the next request starts another;
/// while the hint socket is wanted, another starts by itself (after 1 s, doubling to 60 s
/// while agents keep dying young) and is told to listen again.
public final class SyncAgentClient: SyncHTTPExchange, Sendable {
    /// What the hint socket is kept for.
    public struct Listening: Sendable {
        /// The server's `/v1/notify`.
        public var url: String
        /// The `Authorization` header's value, asked for at each (re)start of the agent.
        public var authorization: @Sendable () throws -> SecretBytes
        /// Called with each hint, on the agent's reader thread: it must return at once.
        public var changed: @Sendable (ChangeHint) -> Void

        public init(url: String, authorization: @escaping @Sendable () throws -> SecretBytes, changed: @escaping @Sendable (ChangeHint) -> Void) {
            self.url = url
            self.authorization = authorization
            self.changed = changed
        }
    }

    private struct Agent: Sendable {
        var fd: Int32
        var process: pid_t
        var started: ContinuousClock.Instant
    }

    private struct State: Sendable {
        var agent: Agent?
        var nextID: UInt32 = 1
        /// The requests waiting, with the agent each went to.
        var pending: [UInt32: (process: pid_t, continuation: CheckedContinuation<SyncHTTPResponse, any Error>)] = [:]
        var listening: Listening?
        /// Seconds before an agent that died while listening is replaced.
        var restartDelay = 1
    }

    private let state = BlockingMutex(State())
    /// Held to write a frame, and to start or end an agent: no frame goes to a descriptor
    /// that was closed (and perhaps reused) under it.
    private let writing = BlockingMutex(())
    private let executable: String
    private let log: @Sendable (String) -> Void

    /// - Parameters:
    ///   - executable: the agent; by default `trousseau-sync-agent` beside this process's executable.
    ///   - log: where the agent's comings and goings are told (securityd's log).
    public init(executable: String = ProcessExecutable.sibling("trousseau-sync-agent"), log: @escaping @Sendable (String) -> Void) {
        self.executable = executable
        self.log = log
    }

    /// The running agent's process id, if one runs.
    public var processID: pid_t? { state.withLock { $0.agent?.process } }

    // MARK: SyncHTTPExchange

    public func exchange(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try writing.withLock { _ in
                    // A frame that could not be written was never read: the agent had
                    // exited. It goes once to a new one.
                    for attempt in 0..<2 {
                        let (id, agent, relisten) = try state.withLock { state in
                            let (agent, relisten) = try running(&state)
                            let id = state.nextID
                            state.nextID = id == UInt32.max ? 1 : id + 1
                            state.pending[id] = (agent.process, continuation)
                            return (id, agent, relisten)
                        }
                        do {
                            // A new agent opens the hint socket too, if it is wanted.
                            if let relisten, let authorization = try? relisten.authorization() {
                                try FrameIO.write(SyncAgentWire.encode(.listen(url: relisten.url, authorization: authorization)), to: agent.fd)
                            }
                            try FrameIO.write(SyncAgentWire.encode(.exchange(id, request)), to: agent.fd)
                            return
                        } catch {
                            // Its reader reaps it; the request is no longer its.
                            state.withLock { state in
                                if state.agent?.process == agent.process { state.agent = nil }
                                state.pending[id] = nil
                            }
                            _ = shutdown(agent.fd, Int32(SHUT_RDWR))
                            if attempt == 1 { throw Self.gone }
                        }
                    }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    // MARK: Hints

    /// Keeps the hint socket open (starting the agent if none runs) until ``stop()``.
    ///
    /// - Throws: `errSecNotAvailable` when no agent can be started; the socket is still
    ///   wanted, and opened when an agent next starts.
    public func listen(_ listening: Listening) throws {
        state.withLock { $0.listening = listening }
        try sendListen()
    }

    /// Whether the hint socket is wanted.
    public var isListening: Bool { state.withLock { $0.listening != nil } }

    /// Ends the agent (the next request starts another): requests waiting fail, and the
    /// hint socket is no longer wanted.
    public func stop() {
        let agent = writing.withLock { _ in
            state.withLock { state -> Agent? in
                state.listening = nil
                defer { state.agent = nil }  // a request from now on starts another
                return state.agent
            }
        }
        // The reader sees the end of the stream, fails what waits and reaps the agent.
        if let agent { _ = shutdown(agent.fd, Int32(SHUT_RDWR)) }
    }

    private func sendListen() throws {
        try writing.withLock { _ in
            let (listening, fd) = try state.withLock { state -> (Listening?, Int32?) in
                guard let listening = state.listening else { return (nil, nil) }
                return (listening, try running(&state).agent.fd)
            }
            guard let listening, let fd else { return }
            try FrameIO.write(SyncAgentWire.encode(.listen(url: listening.url, authorization: try listening.authorization())), to: fd)
        }
    }

    // MARK: The agent's life

    private static let gone = KeychainError(status: OSStatusCode.notAvailable, message: "the sync agent exited during the request")

    /// The running agent, started if none runs (the caller holds `writing`); with what to
    /// listen for when it is a new one and the hint socket is wanted.
    private func running(_ state: inout State) throws -> (agent: Agent, relisten: Listening?) {
        if let agent = state.agent { return (agent, nil) }
        let (ours, theirs) = try UnixSocket.pair()
        defer { close(theirs) }
        let process: pid_t
        do {
            // None of securityd's environment: the agent needs none, and it is the process
            // that reads the network.
            process = try Spawn.process(
                executable, arguments: [], environment: Spawn.sanitizerEnvironment(),
                descriptors: Spawn.Descriptors(standardInput: .null, standardOutput: .null, descriptor3: theirs),
                failure: .notAvailable)
        } catch {
            close(ours)
            throw error
        }
        let agent = Agent(fd: ours, process: process, started: .now)
        state.agent = agent
        guard ThreadLauncher.detach({ [self] in read(agent) }) else {
            state.agent = nil
            close(ours)
            kill(process, SIGKILL)
            _ = SystemCall.wait(process)
            throw KeychainError(status: OSStatusCode.allocate, message: "no thread for the sync agent")
        }
        return (agent, state.listening)
    }

    /// Reads the agent's events until it exits (or sends what is not one), then ends it.
    private func read(_ agent: Agent) {
        while true {
            let event: SyncAgentEvent
            do {
                guard let frame = try FrameIO.read(from: agent.fd, maximumSize: SyncAgentWire.maximumFrameSize) else { break }
                var reader = ByteReader(frame)
                event = try SyncAgentWire.decodeEvent(&reader)
            } catch {
                log("sync: the sync agent's connection failed: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
                break
            }
            switch event {
            case .answered(let id, let response):
                state.withLock { $0.pending.removeValue(forKey: id) }?.continuation.resume(returning: response)
            case .failed(let id, let error):
                state.withLock { $0.pending.removeValue(forKey: id) }?.continuation.resume(throwing: error)
            case .hint(let hint):
                state.withLock { $0.listening?.changed }?(hint)
            }
        }
        let (waiting, relisten, delay) = writing.withLock { _ in
            let ended = state.withLock { state -> ([CheckedContinuation<SyncHTTPResponse, any Error>], Bool, Int) in
                if state.agent?.process == agent.process { state.agent = nil }
                let ours = state.pending.filter { $0.value.process == agent.process }
                for id in ours.keys { state.pending[id] = nil }
                let waiting = ours.values.map(\.continuation)
                let young = ContinuousClock.now - agent.started < .seconds(10)
                let delay = young ? state.restartDelay : 1
                state.restartDelay = min(delay * 2, 60)
                return (waiting, state.listening != nil, delay)
            }
            close(agent.fd)
            return ended
        }
        kill(agent.process, SIGKILL)  // gone already, or it sent what it must not
        let status = SystemCall.wait(agent.process)
        for continuation in waiting { continuation.resume(throwing: Self.gone) }
        guard relisten else { return }
        log("sync: the sync agent exited (status \(status.map(String.init) ?? "unknown")); another starts in \(delay) s")
        sleep(UInt32(delay))
        do {
            try sendListen()
        } catch {
            log("sync: cannot start the sync agent: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
        }
    }
}
