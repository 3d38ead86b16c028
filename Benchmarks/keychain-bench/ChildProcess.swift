import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starting programs the way a shell does (posix_spawn), for whole-process timings and
/// for the echo peer.
enum ChildProcess {
    /// Starts `path` with `arguments`; standard input is `standardInput` (else /dev/null),
    /// standard output `standardOutput` (else /dev/null), standard error /dev/null, and
    /// `descriptor`, when given, becomes the child's descriptor 3.
    static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String], descriptor: Int32? = nil, standardInput: Int32? = nil,
        standardOutput: Int32? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        if let descriptor { posix_spawn_file_actions_adddup2(&actions, descriptor, 3) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        // A clean signal state, whatever ours is: a test runner that started us blocks
        // SIGTERM, and a daemon that inherited that would never stop.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw BenchError("cannot start \(path): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128 + n for a signal).
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Ends `pid` (SIGTERM) and reaps it.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        wait(pid)
    }

    /// Runs `path` to completion.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        wait(try spawn(path, arguments, environment: environment))
    }
}
