// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A System keychain's securityd (`securityd --system`) on a socket and home of a test's,
/// started in the background with no descriptor of ours, as its system unit would run it (a
/// Foundation Process that outlives a test holds up the reaping of every later child).
public final class SystemKeychainDaemon: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let socket: String
    public let home: String
    public let pid: pid_t
    /// The administrator's trust settings file it writes (a System profile's roots), in
    /// place of /etc/trousseau/trust-settings.
    public let adminTrustSettings: String

    /// Starts `securityd` (the build's unless another is named) with its home and socket in
    /// `directory`, and waits for its socket.
    public init(directory: String, securityd: String = DaemonKeychain.daemonExecutable) throws {
        socket = directory + "/run/system.sock"
        home = directory + "/system"
        adminTrustSettings = directory + "/admin-trust-settings"
        let started = try CommandRunner.run(
            executable: "/bin/sh",
            ["-c", "\"$0\" --system --home \"$1\" --socket \"$2\" </dev/null >/dev/null 2>&1 & echo $!", securityd, home, socket],
            environment: [
                "TROUSSEAU_SECURITYD_LOG": directory + "/system.log", "TROUSSEAU_UNSAFE_FAST_KDF": "1", "TROUSSEAU_TPM": SoftwareTPM.suiteBackend,
                "TROUSSEAU_TEST_ADMIN_TRUST_SETTINGS": adminTrustSettings,
            ], clearing: true)
        guard let pid = pid_t(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw POSIXError(.ECHILD)
        }
        self.pid = pid
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
    }

    deinit { stop() }

    /// Stops it (SIGTERM) and waits until it is gone.
    public func stop() {
        kill(pid, SIGTERM)
        for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
    }
}
#endif
