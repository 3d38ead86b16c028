import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on loopback between a device and trousseau-syncd that the test can break:
/// refuse and cut connections (a partition), delay every chunk, or pass requests on and
/// swallow the answers (the server acts on a write the device never hears about). Real
/// sockets both ways, a thread per direction of each connection; a change of mode applies
/// to open connections too, as a device's HTTP client keeps them.
final class FaultyProxy: @unchecked Sendable {
    enum Mode: Equatable {
        /// Bytes pass as they come.
        case pass
        /// Each chunk waits this long before it passes.
        case delay(milliseconds: Int)
        /// New connections are closed at once and open ones are cut.
        case partitioned
        /// Requests reach the server; the answer to a request whose first line contains
        /// this text is dropped and its connection closed (others pass).
        case swallowAnswers(to: String)
    }

    let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var current = Mode.pass
    private var open: Set<Int32> = []
    private var stopped = false

    var mode: Mode {
        get { lock.withLock { current } }
        set {
            // Under the lock: a socket in `open` is not closed yet, so its number is its own.
            lock.withLock {
                current = newValue
                if newValue == .partitioned { cutAll() }
            }
        }
    }

    init(to target: Int) throws {
        self.target = target
        (listener, port) = try Self.listenOnLoopback()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
        close(listener)
    }

    func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            cutAll()
        }
    }

    /// Ends every open connection (the lock held).
    private func cutAll() {
        for socket in open { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// A listening socket on 127.0.0.1 at a port the kernel picks, and that port.
    static func listenOnLoopback() throws -> (socket: Int32, port: Int) {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(listening, 64) == 0 else {
            close(listening)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) } }
        return (listening, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            if mode == .partitioned || lock.withLock({ stopped }) {
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(target))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            lock.withLock {
                open.insert(client)
                open.insert(server)
            }
            let finished = DispatchGroup()
            let swallowing = Swallowing()
            for (from, to, answers) in [(client, server, false), (server, client, true)] {
                finished.enter()
                Thread.detachNewThread { [self] in
                    pump(from: from, to: to, answers: answers, swallowing: swallowing)
                    // Either side's end ends both directions.
                    shutdown(from, Int32(SHUT_RDWR))
                    shutdown(to, Int32(SHUT_RDWR))
                    finished.leave()
                }
            }
            finished.notify(queue: .global()) { [self] in
                lock.withLock {
                    open.remove(client)
                    open.remove(server)
                }
                close(client)
                close(server)
            }
        }
    }

    /// Whether the connection's request now waiting for its answer is one to drop.
    private final class Swallowing: @unchecked Sendable {
        let lock = NSLock()
        var next = false
    }

    private func pump(from: Int32, to: Int32, answers: Bool, swallowing: Swallowing) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = read(from, &buffer, buffer.count)
            guard count > 0 else { return }
            switch mode {
            case .pass: break
            case .delay(let milliseconds): usleep(UInt32(milliseconds) * 1_000)
            case .partitioned: return
            case .swallowAnswers(let request):
                if answers {
                    if swallowing.lock.withLock({ swallowing.next }) { return }
                } else if let line = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\r\n").first {
                    // A chunk that starts a request (keep-alive: one at a time) decides.
                    if line.hasSuffix("HTTP/1.1") { swallowing.lock.withLock { swallowing.next = line.contains(request) } }
                }
            }
            var sent = 0
            while sent < count {
                let written = buffer[sent..<count].withUnsafeBytes { write(to, $0.baseAddress, $0.count) }
                guard written > 0 else { return }
                sent += written
            }
        }
    }
}

/// A loopback HTTP server that answers every request with one canned response, and counts
/// the requests it was sent.
final class CannedHTTPServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var served = 0

    var requests: Int { lock.withLock { served } }

    init(answer: String) throws {
        let (listening, port) = try FaultyProxy.listenOnLoopback()
        listener = listening
        self.port = port
        let response = Array(answer.utf8)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listening, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                var buffer = [UInt8](repeating: 0, count: 16 << 10)
                if read(client, &buffer, buffer.count) > 0 {
                    lock.withLock { served += 1 }
                    _ = response.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                }
                close(client)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
