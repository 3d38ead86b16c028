import Foundation
import KeychainClient
import KeychainModel

/// A keychain in a temporary home served by a real securityd, which the first client
/// starts on demand and the end of the test stops.
public final class DaemonKeychain: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let home: String
    public let paths: KeychainPaths

    public init() throws {
        home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain"
        paths = KeychainPaths(home: home)
    }

    deinit {
        DaemonControl.stop(home: home)
        try? FileManagerLite.removeTree(String(home.dropLast("/keychain".count)))
    }

    public static var daemonExecutable: String {
        CommandRunner.productsDirectory.appendingPathComponent("securityd").path
    }

    /// A new connection (starting the daemon when none runs).
    public func connect() throws -> KeychainClient {
        // A daemon started here derives passcodes cheaply and exits when idle.
        try KeychainClient.connect(paths, daemon: Self.daemonExecutable, daemonEnvironment: CommandRunner.testEnvironment)
    }

    /// The running securityd processes serving this keychain.
    public func daemons() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { DaemonControl.isDaemon($0, home: home) }
    }
}
