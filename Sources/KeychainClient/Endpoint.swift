import Dispatch
import FoundationEssentials
import KeychainModel
internal import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

extension KeychainClient {
    /// Where a keychain's daemon listens, and how to start it when nobody does.
    struct Endpoint: Sendable {
        let paths: KeychainPaths
        let daemon: String
        let daemonEnvironment: [String: String]
        let timeout: Duration
        /// False for a daemon that only its system unit starts (the System keychain's).
        var autostart = true

        /// A connected socket, starting the daemon when nobody listens.
        ///
        /// A daemon started here exits at once when another holds the daemon lock — one
        /// starting, or one still exiting that no longer accepts; when ours has exited and
        /// still nobody listens, another is started.
        ///
        /// - Throws: the error a daemon started here reported when it could not open the
        ///   keychain (``DaemonStartFailure``), or `errSecNotAvailable` when no daemon
        ///   answers within `timeout`.
        func open() throws -> Int32 {
            guard autostart else {
                if let fd = try attempt() { return fd }
                throw KeychainError(
                    status: OSStatusCode.notAvailable,
                    message: "the System keychain's securityd is not running on \(paths.socket) (systemctl start trousseau-system.socket, as root)")
            }
            SocketActivation.prepareHome(paths)
            if let fd = try attempt() { return fd }
            if SocketActivation.start(paths) {
                // systemd listens on the socket now and starts the daemon on this connect.
                if let fd = try attempt() { return fd }
            }
            guard InstallationLayout.isExecutableFile(daemon) else {
                // Once, at once: retrying for the timeout would only hang the caller.
                let looked = ([daemon] + InstallationLayout.daemonCandidates()).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                throw KeychainError(
                    status: OSStatusCode.notAvailable,
                    message: "Trousseau's securityd is not installed (none of \(looked.joined(separator: ", "))): install Trousseau "
                        + "(scripts/install, or the trousseau package), or set TROUSSEAU_SECURITYD")
            }
            DaemonStartFailure.clear(for: paths)
            var child = try startDaemon()
            let deadline = ContinuousClock.now + timeout
            // Poll often: a daemon is ready in about 15 ms, and each poll is one failed
            // connect(2); a long backoff would add up to its last pause to every autostart.
            var pause: UInt32 = 500
            while ContinuousClock.now < deadline {
                usleep(pause)
                pause = min(pause * 2, 2_000)
                if let fd = try attempt() {
                    reapLater(child)
                    return fd
                }
                if let status = Self.exitStatus(child) {
                    // 0: another daemon held the lock (one starting or stopping); try again.
                    // Otherwise ours could not open the keychain: say why.
                    if status != 0, let failure = DaemonStartFailure.read(for: paths) {
                        throw KeychainError(status: failure.status, message: "securityd could not start: \(failure.message)")
                    }
                    child = try startDaemon()
                    pause = 500
                }
            }
            reapLater(child)
            throw KeychainError(status: OSStatusCode.notAvailable, message: "securityd did not start (\(daemon))")
        }

        /// One connection attempt: nil when nobody listens yet.
        private func attempt() throws -> Int32? {
            let fd = try UnixSocket.stream()
            let reason: Int32
            do {
                reason = try UnixSocket.connect(fd, to: paths.socket)
            } catch {
                close(fd)
                throw error
            }
            if reason == 0 { return fd }
            close(fd)
            guard reason == ENOENT || reason == ECONNREFUSED || reason == EAGAIN else {
                throw SystemCall.ioError("connect \(paths.socket)", errno: reason)
            }
            return nil
        }

        /// Starts the daemon in a session of its own, its standard streams on /dev/null,
        /// with the environment ``DaemonEnvironment`` allows. Several clients may do this at
        /// once: all but one daemon find the lock taken and exit.
        private func startDaemon() throws -> pid_t {
            try Spawn.process(
                daemon, arguments: ["--home", paths.home],
                environment: DaemonEnvironment.forDaemon(client: ProcessInfo.processInfo.environment, explicit: daemonEnvironment),
                descriptors: .null, newSession: true, failure: OSStatusCode.notAvailable)
        }

        /// Reaps `child` (exited, or not yet): a daemon that outlives us is reparented.
        private func reapLater(_ child: pid_t) {
            DispatchQueue.global(qos: .background).async {
                SystemCall.wait(child)
            }
        }

        /// Reaps `child` if it has exited: its exit status (128 + the signal that killed it).
        private static func exitStatus(_ child: pid_t) -> Int32? {
            SystemCall.wait(child, options: WNOHANG).map(SystemCall.exitCode)
        }
    }
}
