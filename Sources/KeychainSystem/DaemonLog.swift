#if canImport(Glibc)
import Glibc
#endif

/// One-line diagnostics on standard error (a file when `TROUSSEAU_SECURITYD_LOG` names
/// one). Messages name pids, executables and OSStatus codes, never queries or secrets.
public enum DaemonLog {
    public static func write(_ message: String) {
        var line = "securityd[\(getpid())]: \(message)\n"
        line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
