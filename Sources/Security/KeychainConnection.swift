import KeychainClient
import KeychainModel
import Synchronization

/// The process's connection to its keychain's securityd, made on first use (starting the
/// daemon if needed) and made again after the daemon restarts.
enum KeychainConnection {
    private static let shared = Mutex<KeychainClient?>(nil)
    static let location = Mutex<(paths: KeychainPaths, daemonEnvironment: [String: String])?>(nil)

    /// Sends a request; a broken connection is replaced once (a restarted daemon).
    static func call(_ request: ServiceRequest) throws -> KeychainValue? {
        do {
            return try client().call(request)
        } catch let error as KeychainError where error.status == OSStatusCode.io {
            reset()
            return try client().call(request)
        }
    }

    static func reset() {
        shared.withLock { $0 = nil }
    }

    private static func client() throws -> KeychainClient {
        try shared.withLock { client in
            if let client { return client }
            let (paths, environment) = location.withLock { $0 } ?? (KeychainPaths.fromEnvironment(), [:])
            let connected = try KeychainClient.connect(paths, daemonEnvironment: environment)
            client = connected
            return connected
        }
    }
}

/// Trousseau's addition to the Security API: which keychain this process uses.
public enum TrousseauKeychain {
    /// Uses the keychain in `home` instead of `KEYCHAIN_HOME` (or the default) from now on;
    /// a daemon this process starts gets `daemonEnvironment` added to its environment.
    public static func use(home: String, daemonEnvironment: [String: String] = [:]) {
        KeychainConnection.location.withLock { $0 = (KeychainPaths(home: home), daemonEnvironment) }
        KeychainConnection.reset()
    }
}
