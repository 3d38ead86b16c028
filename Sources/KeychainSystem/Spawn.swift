public import FoundationEssentials
public import KeychainModel

#if canImport(Glibc)
public import Glibc
#endif

/// Starts a program with exactly the environment and descriptors it is given.
public enum Spawn {
    /// What one of the child's standard streams is.
    public enum Stream: Sendable {
        /// Ours.
        case inherit
        /// /dev/null.
        case null
        /// A descriptor of ours (a pipe's end).
        case descriptor(Int32)
    }

    /// What the child's descriptors are.
    public struct Descriptors: Sendable {
        public var standardInput: Stream
        public var standardOutput: Stream
        public var standardError: Stream
        /// A descriptor of ours that becomes the child's descriptor 3.
        public var descriptor3: Int32?

        public init(
            standardInput: Stream = .inherit, standardOutput: Stream = .inherit, standardError: Stream = .inherit,
            descriptor3: Int32? = nil
        ) {
            self.standardInput = standardInput
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.descriptor3 = descriptor3
        }

        /// Standard input, output and error on /dev/null.
        public static let null = Descriptors(standardInput: .null, standardOutput: .null, standardError: .null)
    }

    /// Starts `executable` with `arguments` (argv[0] is the executable) and `environment`,
    /// nothing else of ours: every other descriptor is close-on-exec.
    ///
    /// - Parameter newSession: start it in a session of its own (setsid), so it outlives
    ///   our terminal.
    /// - Throws: `failure` with the reason when it cannot be started.
    public static func process(
        _ executable: String, arguments: [String], environment: [String: String],
        descriptors: Descriptors = Descriptors(), newSession: Bool = false, failure: OSStatusCode = .io
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), descriptors.standardInput), (1, descriptors.standardOutput), (2, descriptors.standardError)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let ours): posix_spawn_file_actions_adddup2(&actions, ours, fd)
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
    /// Runs `executable` with its standard output on a close-on-exec socketpair (a pipe
    /// would need pipe2, which Glibc's module does not show), which `read` consumes while it
    /// runs; returns its exit code and what `read` returned.
    public static func capturingOutput<Output>(
        _ executable: String, arguments: [String], environment: [String: String], standardInput: Stream = .inherit,
        standardError: Stream = .inherit, failure: OSStatusCode = .io, read: (Int32) throws -> Output
    ) throws -> (exitCode: Int32, output: Output) {
        let (reader, writer) = try UnixSocket.pair()
        defer { close(reader) }
        let pid: pid_t
        do {
            pid = try process(
                executable, arguments: arguments, environment: environment,
                descriptors: Descriptors(standardInput: standardInput, standardOutput: .descriptor(writer), standardError: standardError),
                failure: failure)
        } catch {
            close(writer)
            throw error
        }
        close(writer)
        let output: Output
        do {
            output = try read(reader)
        } catch {
            close(reader)  // a child still writing gets EPIPE
            SystemCall.wait(pid)
            throw error
        }
        return (SystemCall.wait(pid).map(SystemCall.exitCode) ?? -1, output)
    }

    /// Reads `fd` to its end (at most `limit` bytes).
    public static func readAll(_ fd: Int32, limit: Int = 1 << 20) -> [UInt8] {
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while output.count < limit {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        return output
    }

    /// The sanitizer runtimes' options from this process's environment: a sanitized test
    /// run keeps them in every process it starts; nothing else passes.
    public static func sanitizerEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        environment.filter { ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"].contains($0.key) }
    }
}
