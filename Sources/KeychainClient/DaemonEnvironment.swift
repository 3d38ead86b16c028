import FoundationEssentials
internal import KeychainSystem

/// The environment of a securityd a client starts: a fixed list, never the client's own.
///
/// Any process of the user may be the client that starts the daemon; what it puts in its
/// environment must not configure the process that decides what every other process may
/// read. So the daemon gets its home and runtime paths, its log and its idle time from the
/// client's environment, and nothing else (no `LD_PRELOAD`, no test hook). Test builds also
/// pass the test hooks a test names explicitly (`daemonEnvironment:`), never ones found in
/// the client's environment; release builds have no hooks to pass.
enum DaemonEnvironment {
    /// What passes from the client's environment.
    static let inherited: Set<String> = [
        "HOME", "KEYCHAIN_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
        "TROUSSEAU_SECURITYD_LOG", "TROUSSEAU_SECURITYD_IDLE_SECONDS", "TROUSSEAU_TPM", "TROUSSEAU_SYNC_INTERVAL_SECONDS", "TROUSSEAU_SYNC_STALL_SECONDS",
    ]

    /// What a caller may name explicitly, beyond ``inherited``: the test hooks, in test builds.
    static var explicitOnly: Set<String> {
        #if TROUSSEAU_TEST_HOOKS
        Set(TestHook.allCases.map(\.rawValue))
        #else
        []
        #endif
    }

    /// The daemon's environment: the inherited variables of `client`, the sanitizers'
    /// options, then those of `explicit` that are allowed.
    static func forDaemon(client: [String: String], explicit: [String: String]) -> [String: String] {
        var environment = client.filter { inherited.contains($0.key) }
        environment.merge(Spawn.sanitizerEnvironment(client)) { _, new in new }
        let allowed = inherited.union(explicitOnly)
        environment.merge(explicit.filter { allowed.contains($0.key) }) { _, new in new }
        return environment
    }
}
