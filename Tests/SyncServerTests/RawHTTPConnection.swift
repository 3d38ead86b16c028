import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 connection to a loopback port over a plain blocking socket, for what
/// URLSession hides: half a request, a byte at a time, one connection kept for many requests,
/// the moment the server closes. Blocking: use it on a thread of its own (`onThread`).
final class RawHTTPConnection {
    let port: Int
    private let fd: Int32
    private var received: [UInt8] = []

    init(port: Int) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SyncTestError(description: "socket: errno \(errno)") }
        var address = FaultyProxy.loopback(port: UInt16(port))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // On failure deinit closes the socket (it runs once every property is set).
        guard connected == 0 else { throw SyncTestError(description: "connect to port \(port): errno \(errno)") }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Sends `bytes` as they are; false when the server has closed the connection (no
    /// SIGPIPE: MSG_NOSIGNAL).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Waits up to `seconds` for the server to close the connection, discarding what it
    /// sends; whether it closed (end of stream or reset) in that time.
    func closes(within seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            guard let chunk = readChunk(timeoutMilliseconds: Int32(clamping: milliseconds)) else {
                continue  // poll timed out or was interrupted: the loop checks the deadline
            }
            if chunk.isEmpty { return true }
        }
    }

    /// Sends one request and reads its answer (a `Content-Length` body): status and body.
    func request(_ method: String, _ path: String, authorization: String? = nil, json: Data? = nil) throws -> (status: Int, body: Data) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        if json != nil { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(json?.count ?? 0)\r\n\r\n"
        guard send(Array(head.utf8) + Array(json ?? Data())) else { throw SyncTestError(description: "the server closed the connection") }
        return try readResponse()
    }

    /// Reads one response: its status line, headers and `Content-Length` body (30 s at most).
    func readResponse() throws -> (status: Int, body: Data) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual(separator) }
            if headEnd == nil { try fill() }
        }
        let head = String(decoding: received[..<headEnd!], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw SyncTestError(description: "not an HTTP status line: \(lines[0])") }
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        let bodyStart = headEnd! + 4
        while received.count < bodyStart + length { try fill() }
        let body = Data(received[bodyStart..<bodyStart + length])
        received.removeFirst(bodyStart + length)
        return (status, body)
    }

    /// Appends what the server sends next; throws when it closes or says nothing for 30 s.
    private func fill() throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let chunk = readChunk(timeoutMilliseconds: 1000) else { continue }
            guard !chunk.isEmpty else { throw SyncTestError(description: "the server closed the connection mid-answer") }
            received += chunk
            return
        }
        throw SyncTestError(description: "no answer within 30 s")
    }

    /// The next bytes: empty at the end of the stream (or a reset), nil when none came within
    /// the timeout.
    private func readChunk(timeoutMilliseconds: Int32) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, max(0, timeoutMilliseconds))
        guard ready > 0 else { return nil }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { return errno == EINTR || errno == EAGAIN ? nil : [] }
        return Array(chunk[..<count])
    }
}
