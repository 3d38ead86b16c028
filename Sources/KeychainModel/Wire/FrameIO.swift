public import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Length-prefixed frames on a stream socket: a 32-bit big-endian length, then the payload.
/// A frame longer than the reader's limit is refused before its payload is read.
public enum FrameIO {
    /// Writes one frame. The buffer is zeroed afterwards: frames may carry secrets.
    ///
    /// - Throws: `errSecIO` when the peer is gone.
    public static func write(_ payload: Data, to fd: Int32) throws {
        guard send(payload, to: fd) == 0 else { throw KeychainError(status: OSStatusCode.io, message: "the connection is closed") }
    }

    /// Reads one frame; nil at a clean end of stream.
    ///
    /// - Throws: `errSecIO` for a stream cut mid-frame, `errSecDecode` for a frame longer
    ///   than `maximumSize`.
    public static func read(from fd: Int32, maximumSize: Int) throws -> Data? {
        switch try receive(from: fd, maximumSize: maximumSize) {
        case .frame(let frame): return frame
        case .endOfStream: return nil
        case .reset: throw cut
        }
    }

    /// Sends a request frame and reads its response, on a connection where one request at a
    /// time is outstanding.
    ///
    /// - Returns: the response; nil when the peer closed without reading the whole request,
    ///   which it therefore never acted on — so it may be sent to another server. A Unix
    ///   stream socket closed with unread data (or never accepted) resets its peer, and
    ///   one shut for writing refuses the send.
    /// - Throws: `errSecIO` when the peer closed after reading the request (it may have
    ///   applied it) or mid-response; `errSecDecode` for a response longer than `maximumSize`.
    public static func exchange(_ request: Data, on fd: Int32, maximumSize: Int) throws -> Data? {
        switch send(request, to: fd) {
        case 0: break
        case EPIPE, ECONNRESET, ENOTCONN: return nil
        case let reason: throw KeychainError(status: OSStatusCode.io, message: "send: \(String(cString: strerror(reason)))")
        }
        switch try receive(from: fd, maximumSize: maximumSize) {
        case .frame(let frame): return frame
        case .reset: return nil
        case .endOfStream: throw KeychainError(status: OSStatusCode.io, message: "the connection closed before an answer")
        }
    }

    /// Answers request frames on `fd` until end of stream, in order: each goes to `respond`,
    /// whose result is sent back. A frame that cannot be read, or that `respond` cannot
    /// parse (it throws), is answered with `failure` and ends the connection, after
    /// `closing` is told why. Each request frame is zeroed once answered: it may carry a
    /// passcode, a secret or a key.
    public static func serve(
        _ fd: Int32, maximumSize: Int, failure: (KeychainError) -> Data,
        closing: (KeychainError) -> Void = { _ in }, respond: (Data) throws -> Data
    ) {
        while true {
            var frame: Data
            do {
                guard let read = try read(from: fd, maximumSize: maximumSize) else { return }
                frame = read
            } catch {
                let reason = error as? KeychainError ?? KeychainError.io
                closing(reason)
                try? write(failure(reason), to: fd)
                return
            }
            defer { frame.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            let response: Data
            do {
                response = try respond(frame)
            } catch {
                closing(KeychainError.param("malformed request"))
                try? write(failure(KeychainError.param("malformed request")), to: fd)
                return
            }
            do {
                try write(response, to: fd)
            } catch {
                return
            }
        }
    }

    private static let cut = KeychainError(status: OSStatusCode.io, message: "the connection was cut mid-frame")

    /// Sends a length-prefixed frame; 0, or the errno that stopped it. The copy is zeroed.
    private static func send(_ payload: Data, to fd: Int32) -> Int32 {
        var frame = Data()
        frame.appendInteger(UInt32(payload.count))
        frame.append(payload)
        defer { frame.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        return frame.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))  // count > 0
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return n < 0 ? errno : EPIPE }
                offset += n
            }
            return 0
        }
    }

    private enum Received {
        case frame(Data)
        /// The peer closed before the first byte.
        case endOfStream
        /// The connection was reset before the first byte.
        case reset
    }

    private static func receive(from fd: Int32, maximumSize: Int) throws -> Received {
        var header = [UInt8](repeating: 0, count: 4)
        switch fill(&header, from: fd) {
        case .full: break
        case .ended(afterBytes: 0): return .endOfStream
        case .failed(ECONNRESET, afterBytes: 0): return .reset
        default: throw cut
        }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumSize else { throw KeychainError.decode("a frame of \(length) bytes is larger than \(maximumSize)") }
        var payload = [UInt8](repeating: 0, count: length)
        defer { payload.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard case .full = fill(&payload, from: fd) else { throw cut }
        return .frame(Data(payload))
    }

    private enum Fill {
        case full
        case ended(afterBytes: Int)
        case failed(Int32, afterBytes: Int)
    }

    private static func fill(_ buffer: inout [UInt8], from fd: Int32) -> Fill {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return .failed(errno, afterBytes: offset) }
            if n == 0 { return .ended(afterBytes: offset) }
            offset += n
        }
        return .full
    }
}
