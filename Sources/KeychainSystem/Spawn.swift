public import FoundationEssentials
public import KeychainModel

#if canImport(Glibc)
public import Glibc
#endif

/// Starts a program with exactly the environment and descriptors it is given.
public enum Spawn {
    /// What the child's descriptors are.
    public struct Descriptors: Sendable {
        /// Standard input, output and error on /dev/null.
        public var nullStandardStreams = false
        /// A descriptor of ours that becomes the child's descriptor 3.
        public var descriptor3: Int32?

        public init(nullStandardStreams: Bool = false, descriptor3: Int32? = nil) {
            self.nullStandardStreams = nullStandardStreams
            self.descriptor3 = descriptor3
        }
    }

    /// Starts `executable` with `arguments` (argv[0] is the executable) and `environment`,
    /// nothing else of ours: every other descriptor is close-on-exec.
    ///
    /// - Parameter newSession: start it in a session of its own (setsid), so it outlives
    ///   our terminal.
    /// - Throws: `failure` with the reason when it cannot be started.
    public static func process(
        _ executable: String, arguments: [String], environment: [String: String],
        descriptors: Descriptors = Descriptors(), newSession: Bool = false, failure: Int32 = OSStatusCode.io
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if descriptors.nullStandardStreams {
            for fd: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        var moved: Int32 = -1
        defer { if moved >= 0 { close(moved) } }
        if let fd = descriptors.descriptor3 {
            // dup2 onto 3 clears close-on-exec for the child's copy only; a descriptor that
            // already is 3 is moved first, since dup2 of a descriptor onto itself keeps the flag.
            var source = fd
            if fd == 3 {
                moved = fcntl(fd, F_DUPFD_CLOEXEC, 4)
                source = moved
            }
            posix_spawn_file_actions_adddup2(&actions, source, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newSession { posix_spawnattr_setflags(&attributes, 0x80) }  // POSIX_SPAWN_SETSID, hidden behind _GNU_SOURCE
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw KeychainError(status: failure, message: "cannot start \(executable): \(SystemCall.describe(result))")
        }
        return pid
    }
}

extension Spawn {
    /// The sanitizer runtimes' options from this process's environment: a sanitized test
    /// run keeps them in every process it starts; nothing else passes.
    public static func sanitizerEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        environment.filter { ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"].contains($0.key) }
    }
}
