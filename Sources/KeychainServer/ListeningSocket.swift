import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's Unix socket: 0600 in a 0700 directory, or the one systemd passed.
public enum ListeningSocket {
    /// The socket systemd passed (LISTEN_FDS=1 for this pid), else a new one bound at `path`.
    ///
    /// - Throws: `errSecIO` when the socket cannot be made.
    public static func open(path: String, environment: [String: String]) throws -> Int32 {
        if environment["LISTEN_FDS"] == "1", environment["LISTEN_PID"] == String(getpid()) {
            return 3  // SD_LISTEN_FDS_START
        }
        let directory = String(path[..<path.lastIndex(of: "/")!])  // paths are absolute
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw error("cannot create \(directory)") }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "\(directory) must belong to this user with mode 0700")
        }
        let fd = try UnixSocket.stream()
        unlink(path)  // a stale socket from a daemon that died; the daemon lock says none runs
        do {
            try UnixSocket.listen(fd, at: path)
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
