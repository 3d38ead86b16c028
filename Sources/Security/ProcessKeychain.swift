import KeychainClient
import KeychainModel

/// The keychain the Security functions of this process use: the one `KEYCHAIN_HOME` names
/// (or the default), unless ``TrousseauKeychain/use(home:daemonEnvironment:)`` chose another.
enum ProcessKeychain {
    private static let current = BlockingMutex<Keychain?>(nil)

    static var keychain: Keychain {
        current.withLock { keychain in
            if let keychain { return keychain }
            let opened = Keychain()
            keychain = opened
            return opened
        }
    }

    static func use(_ keychain: Keychain) {
        current.withLock { $0 = keychain }
    }
}

/// Trousseau's addition to the Security API: which keychain this process uses.
public enum TrousseauKeychain {
    /// Uses the keychain in `home` instead of `KEYCHAIN_HOME` (or the default) from now on;
    /// a daemon this process starts gets `daemonEnvironment` added to its environment.
    /// `systemSocket` names where the System keychain's securityd listens (tests run their own).
    public static func use(home: String, daemonEnvironment: [String: String] = [:], systemSocket: String? = nil) {
        let system = systemSocket.map { KeychainPaths(home: KeychainPaths.systemHome, socket: $0) } ?? .system()
        ProcessKeychain.use(Keychain(paths: KeychainPaths(home: home), daemonEnvironment: daemonEnvironment, system: system))
    }

    /// The keychain the Security functions (and LocalAuthentication) of this process use.
    public static var current: Keychain { ProcessKeychain.keychain }
}
