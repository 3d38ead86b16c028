import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's Unix socket: 0600 in a 0700 directory (a user's keychain), or 0666 in a
/// 0755 directory no one else may write (the System keychain's: every user may ask, and
/// securityd decides by the caller's uid), or the one systemd passed.
public enum ListeningSocket {
    /// The socket systemd passed (LISTEN_FDS=1 for this pid), else a new one bound at `path`.
    ///
    /// - Parameter shared: every user may connect (the System keychain).
    /// - Throws: `errSecIO` when the socket cannot be made.
    public static func open(path: String, environment: [String: String], shared: Bool = false) throws -> Int32 {
        if environment["LISTEN_FDS"] == "1", environment["LISTEN_PID"] == String(getpid()) {
            return 3  // SD_LISTEN_FDS_START
        }
        let directory = String(path[..<path.lastIndex(of: "/")!])  // paths are absolute
        if mkdir(directory, shared ? 0o755 : 0o700) != 0, errno != EEXIST { throw error("cannot create \(directory)") }
        var info = stat()
        // Nobody else may write the directory: they could put their own socket in our place.
        guard stat(directory, &info) == 0, info.st_uid == getuid(), info.st_mode & (shared ? 0o022 : 0o077) == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "\(directory) must belong to this user with mode \(shared ? "0755" : "0700")")
        }
        let fd = try UnixSocket.stream()
        unlink(path)  // a stale socket from a daemon that died; the daemon lock says none runs
        do {
            try UnixSocket.listen(fd, at: path)
            if shared, chmod(path, 0o666) != 0 { throw error("cannot open \(path) to every user") }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func error(_ what: String) -> KeychainError {
        SystemCall.ioError(what)
    }
}
