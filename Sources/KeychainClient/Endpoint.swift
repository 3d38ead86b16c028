import Dispatch
import FoundationEssentials
import KeychainModel

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
            if let fd = try attempt() { return fd }
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
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw KeychainError(status: OSStatusCode.io, message: "socket: \(String(cString: strerror(errno)))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(paths.socket.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                close(fd)
                throw KeychainError.param("socket path longer than 107 bytes: \(paths.socket)")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 { return fd }
            let reason = errno
            close(fd)
            guard reason == ENOENT || reason == ECONNREFUSED || reason == EAGAIN else {
                throw KeychainError(status: OSStatusCode.io, message: "connect \(paths.socket): \(String(cString: strerror(reason)))")
            }
            return nil
        }

        /// Starts the daemon in a session of its own, its standard streams on /dev/null.
        /// Several clients may do this at once: all but one daemon find the lock taken and exit.
        private func startDaemon() throws -> pid_t {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for fd: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID, hidden behind _GNU_SOURCE
            let words: [String] = [daemon, "--home", paths.home]
            let argv = words.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            let variables = ProcessInfo.processInfo.environment.merging(daemonEnvironment) { _, added in added }
            let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { envp.forEach { free($0) } }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, daemon, &actions, &attributes, argv, envp)
            guard result == 0 else {
                throw KeychainError(status: OSStatusCode.notAvailable, message: "cannot start \(daemon): \(String(cString: strerror(result)))")
            }
            return pid
        }

        /// Reaps `child` (exited, or not yet): a daemon that outlives us is reparented.
        private func reapLater(_ child: pid_t) {
            DispatchQueue.global(qos: .background).async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0, errno == EINTR {}
            }
        }

        /// Reaps `child` if it has exited: its exit status (128 + the signal that killed it).
        private static func exitStatus(_ child: pid_t) -> Int32? {
            var status: Int32 = 0
            guard waitpid(child, &status, WNOHANG) == child else { return nil }
            return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
        }
    }
}
