import KeychainModel

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
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw error("socket") }
        var address = try socketAddress(path)
        unlink(path)  // a stale socket from a daemon that died; the daemon lock says none runs
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 128) == 0 else {
            let failure = error("cannot listen on \(path)")
            close(fd)
            throw failure
        }
        return fd
    }

    /// A `sockaddr_un` for `path`.
    ///
    /// - Throws: `errSecParam` when the path does not fit (107 bytes).
    public static func socketAddress(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KeychainError.param("socket path longer than 107 bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    static func error(_ what: String) -> KeychainError {
        KeychainError(status: OSStatusCode.io, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
