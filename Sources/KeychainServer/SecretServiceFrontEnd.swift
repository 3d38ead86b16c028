import KeychainStore
import KeychainSystem
import SecretService

/// Runs the freedesktop Secret Service (`securityd --secret-service`, what the D-Bus
/// activation file and the user unit start) on a thread of its own, over this daemon's
/// store, with callers' signatures checked as for socket callers.
public enum SecretServiceFrontEnd {
    /// Starts serving the session bus (`address`, else the session bus of the environment).
    ///
    /// - Parameter onEnd: called with the reason when the service stops (the bus went away,
    ///   or another process owns the name): the daemon then exits, losing nothing.
    public static func start(
        store: KeychainStore, identification: CallerIdentification, address: String?, onEnd: @escaping @Sendable (String) -> Void
    ) {
        let provider = SecretServiceProvider(
            store: store, scopes: CallerScopes(signedGroups: { pid in identification.signedAccessGroups(pid: pid) }))
        let started = ThreadLauncher.detach {
            let reason = provider.run(address: address)
            DaemonLog.write("Secret Service: \(reason)")
            onEnd("Secret Service: \(reason)")
        }
        if !started { onEnd("cannot start the Secret Service's thread") }
    }
}
