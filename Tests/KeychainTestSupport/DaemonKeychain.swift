// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation
import KeychainClient
import KeychainModel

/// A keychain in a temporary home served by a real securityd, which the first client
/// starts on demand and the end of the test stops.
public final class DaemonKeychain: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let home: String
    public let paths: KeychainPaths

    /// Variables a daemon started by ``connect()`` gets, beyond the test ones.
    public let daemonEnvironment: [String: String]

    /// What ``connect()`` starts when no daemon runs: securityd, or a wrapper that
    /// executes it (for example under a resource limit).
    public var daemon = DaemonKeychain.daemonExecutable

    public init(daemonEnvironment: [String: String] = [:]) throws {
        home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain"
        paths = KeychainPaths(home: home)
        self.daemonEnvironment = daemonEnvironment
    }

    /// The temporary directory holding the home, for a test's own files.
    public var directory: String { String(home.dropLast("/keychain".count)) }

    /// The variables of a daemon started here: the test ones, the log, ``daemonEnvironment``.
    public var environment: [String: String] {
        CommandRunner.testEnvironment.merging(["TROUSSEAU_SECURITYD_LOG": log]) { _, new in new }
            .merging(daemonEnvironment) { _, new in new }
    }

    deinit {
        DaemonControl.stop(home: home)
        try? FileManagerLite.removeTree(directory)
    }

    public static var daemonExecutable: String {
        CommandRunner.productsDirectory.appendingPathComponent("securityd").path
    }

    /// The log of a daemon started by ``connect()``.
    public var log: String { directory + "/securityd.log" }

    /// What the daemon's log holds so far (for failure messages).
    public var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// A new connection (starting the daemon when none runs).
    public func connect() throws -> KeychainClient {
        // A daemon started here derives passcodes cheaply, exits when idle, and logs.
        try KeychainClient.connect(paths, daemon: daemon, daemonEnvironment: environment)
    }

    /// SIGKILLs `pid` (a daemon or enclave of this keychain) and waits until it is gone.
    public func kill9(_ pid: pid_t) {
        kill(pid, SIGKILL)
        while DaemonControl.isRunning(pid) { usleep(1_000) }
    }

    /// The enclave processes of this keychain.
    public func enclaves() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard DaemonControl.isRunning(pid), let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.first?.hasSuffix("/trousseau-enclave") == true && words.contains(home)
        }
    }

    /// The running securityd processes serving this keychain.
    public func daemons() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { DaemonControl.isDaemon($0, home: home) }
    }
}
#endif
