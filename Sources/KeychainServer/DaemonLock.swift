import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The lock that makes securityd one per keychain: an exclusive `flock` on
/// `KEYCHAIN_HOME/securityd.lock`, held for the daemon's life (the kernel drops it when the
/// process dies, however it dies).
public enum DaemonLock {
    public static let fileName = "securityd.lock"

    /// Takes the lock.
    ///
    /// - Returns: false when another daemon holds it.
    /// - Throws: `errSecIO` when the lock file cannot be opened.
    public static func acquire(home: String) throws -> Bool {
        let fd = open(home + "/" + fileName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw SystemCall.ioError("cannot open the daemon lock")
        }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            // Record the pid for tools and tests; the descriptor stays open (and locked).
            ftruncate(fd, 0)
            let pid = Array("\(getpid())\n".utf8)
            _ = pwrite(fd, pid, pid.count, 0)
            return true
        }
        close(fd)
        return false
    }
}
