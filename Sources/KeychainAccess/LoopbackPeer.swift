import FoundationEssentials
public import Hummingbird
public import HummingbirdWebSocket
import KeychainModel
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The window's request context: Hummingbird's, with the port the peer connected from, so
/// that ``LoopbackPeer`` can tell whose process it is.
public struct WindowRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The connection the request came on.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

/// Who owns the other end of a loopback connection: the kernel's table of TCP sockets
/// (`/proc/net/tcp`) names the uid of each. Cookies are not bound to a port, so the user's
/// browser sends the window's session cookie to any server on 127.0.0.1 — another user's
/// too; with this check, a request from another user's process is refused even with the
/// cookie (docs/SECURITY.md, "Keychain Access").
enum LoopbackPeer {
    /// The peer ports of open connections already found to be this user's: a connection's
    /// port is its own while it is open (removed when it closes), so the kernel's table —
    /// whose reading walks every TCP socket of the machine, most of a page's time before —
    /// is read once per connection, not once per request.
    private static let verified = BlockingMutex<Set<Connection>>([])

    /// A connection by its object and peer port; the close callback holds the object, so its
    /// identity is not reused before it is removed.
    private struct Connection: Hashable {
        let channel: ObjectIdentifier
        let peerPort: Int
    }

    /// Whether `channel`, a connection from 127.0.0.1 to our `port`, is a socket of this
    /// process's user. False when it cannot be found (closed meanwhile): refused.
    static func isOwnUser(_ channel: any Channel, port: Int) -> Bool {
        guard let peerPort = channel.remoteAddress?.port else { return false }
        let connection = Connection(channel: ObjectIdentifier(channel), peerPort: peerPort)
        if verified.withLock({ $0.contains(connection) }) { return true }
        guard let table = readTable(), owner(in: table, peerPort: peerPort, port: port) == getuid() else { return false }
        verified.withLock { _ = $0.insert(connection) }
        channel.closeFuture.whenComplete { _ in
            _ = channel
            verified.withLock { _ = $0.remove(connection) }
        }
        // Closed before the callback was registered: the callback ran at once, so the port is
        // gone again; nothing is left behind either way.
        return true
    }

    /// `/proc/net/tcp` whole: the kernel hands it out a page at a time, so it is read until
    /// its end (a reader that trusts the file's size, 0, or reads once, misses sockets).
    static func readTable() -> String? {
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += buffer[..<count]
        }
    }

    /// The uid of the socket whose local end is 127.0.0.1:`peerPort` and remote end
    /// 127.0.0.1:`port`, from the text of `/proc/net/tcp`.
    static func owner(in table: String, peerPort: Int, port: Int) -> UInt32? {
        // Addresses are the in_addr as the kernel's %08X of its host-order word, then ":"
        // and the port in hexadecimal.
        let loopback = hex(UInt64(UInt32(bigEndian: 0x7F00_0001)), width: 8)
        let local = loopback + ":" + hex(UInt64(peerPort), width: 4), remote = loopback + ":" + hex(UInt64(port), width: 4)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1] == local, fields[2] == remote else { continue }
            return UInt32(fields[7])
        }
        return nil
    }
}

extension LoopbackPeer {
    /// `value` in upper-case hexadecimal, at least `width` digits (the kernel's %0NX).
    fileprivate static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: Swift.max(0, width - digits.count)) + digits
    }
}
