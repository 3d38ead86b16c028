import KeychainModel

#if canImport(Glibc)
public import Glibc
#endif

/// Unix stream sockets by path: the daemon's listening socket and its clients' connections.
public enum UnixSocket {
    /// A `sockaddr_un` for `path`.
    ///
    /// - Throws: `errSecParam` when the path does not fit (107 bytes).
    public static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KeychainError.param("socket path longer than 107 bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// A new close-on-exec stream socket.
    public static func stream() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCall.ioError("socket") }
        return fd
    }

    /// Two connected close-on-exec stream sockets.
    public static func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SystemCall.ioError("socketpair")
        }
        return (fds[0], fds[1])
    }

    /// Connects `fd` to `path`: 0, or the errno that stopped it.
    public static func connect(_ fd: Int32, to path: String) throws -> Int32 {
        var address = try address(path)
        while true {
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 { return 0 }
            if errno != EINTR { return errno }
        }
    }

    /// Binds `fd` to `path` (mode 0600) and listens.
    public static func listen(_ fd: Int32, at path: String, backlog: Int32 = 128) throws {
        var address = try address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, backlog) == 0 else {
            throw SystemCall.ioError("cannot listen on \(path)")
        }
    }
}
