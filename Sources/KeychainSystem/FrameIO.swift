public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Length-prefixed frames on a stream socket: a 32-bit big-endian length, then the payload.
/// A frame longer than the reader's limit is refused before its payload is read.
///
/// Frames may carry passcodes, secrets and keys: a received frame lands in zeroing storage
/// (``SecretBytes``) and a sent one is zeroed once written.
public enum FrameIO {
    /// Writes one frame and zeroes `payload`.
    ///
    /// - Throws: `errSecIO` when the peer is gone.
    public static func write(_ payload: consuming ByteWriter, to fd: Int32) throws {
        guard send(&payload, to: fd) == 0 else { throw KeychainError(status: OSStatusCode.io, message: "the connection is closed") }
    }

    /// Reads one frame; nil at a clean end of stream.
    ///
    /// - Throws: `errSecIO` for a stream cut mid-frame, `errSecDecode` for a frame longer
    ///   than `maximumSize`.
    public static func read(from fd: Int32, maximumSize: Int) throws -> SecretBytes? {
        switch try receive(from: fd, maximumSize: maximumSize) {
        case .frame(let frame): return frame
        case .endOfStream: return nil
        case .reset: throw cut
        }
    }

    /// Sends a request frame (zeroing it) and reads its response, on a connection where one
    /// request at a time is outstanding.
    ///
    /// - Returns: the response; nil when the peer closed without reading the whole request,
    ///   which it therefore never acted on — so it may be sent to another server. A Unix
    ///   stream socket closed with unread data (or never accepted) resets its peer, and
    ///   one shut for writing refuses the send.
    /// - Throws: `errSecIO` when the peer closed after reading the request (it may have
    ///   applied it) or mid-response; `errSecDecode` for a response longer than `maximumSize`.
    public static func exchange(_ request: inout ByteWriter, on fd: Int32, maximumSize: Int, zeroing: Bool = true) throws -> SecretBytes? {
        switch send(&request, to: fd, zeroing: zeroing) {
        case 0: break
        case EPIPE, ECONNRESET, ENOTCONN: return nil
        case let reason: throw SystemCall.ioError("send", errno: reason)
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
    /// `closing` is told why.
    public static func serve(
        _ fd: Int32, maximumSize: Int, failure: (KeychainError) -> ByteWriter,
        closing: (KeychainError) -> Void = { _ in }, respond: (inout ByteReader) throws -> ByteWriter
    ) {
        while true {
            let frame: SecretBytes
            do {
                guard let read = try read(from: fd, maximumSize: maximumSize) else { return }
                frame = read
            } catch {
                let reason = error as? KeychainError ?? KeychainError.io
                closing(reason)
                try? write(failure(reason), to: fd)
                return
            }
            var reader = ByteReader(frame)
            let response: ByteWriter
            do {
                response = try respond(&reader)
            } catch {
                let reason = KeychainError.param("malformed request: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
                closing(reason)
                try? write(failure(reason), to: fd)
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

    /// Sends a length-prefixed frame; 0, or the errno that stopped it. The payload and the
    /// frame's copy of it are zeroed (unless the caller keeps the payload to send again).
    private static func send(_ payload: inout ByteWriter, to fd: Int32, zeroing: Bool = true) -> Int32 {
        var frame = ByteWriter(capacity: payload.bytes.count + 4)
        frame.appendInteger(UInt32(payload.bytes.count))
        frame.append(contentsOf: payload.bytes)
        if zeroing { payload.zero() }
        defer { frame.zero() }
        return frame.bytes.withUnsafeBytes { bytes in
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
        case frame(SecretBytes)
        /// The peer closed before the first byte.
        case endOfStream
        /// The connection was reset before the first byte.
        case reset
    }

    private static func receive(from fd: Int32, maximumSize: Int) throws -> Received {
        var header = (UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        let filled = withUnsafeMutableBytes(of: &header) { fill($0, from: fd) }
        switch filled {
        case .full: break
        case .ended(afterBytes: 0): return .endOfStream
        case .failed(ECONNRESET, afterBytes: 0): return .reset
        default: throw cut
        }
        let length = withUnsafeBytes(of: header) { $0.reduce(0) { $0 << 8 | Int($1) } }
        guard length <= maximumSize else { throw KeychainError.decode("a frame of \(length) bytes is larger than \(maximumSize)") }
        return .frame(try SecretBytes(count: length) { buffer in
            guard case .full = fill(buffer, from: fd) else { throw cut }
        })
    }

    private enum Fill {
        case full
        case ended(afterBytes: Int)
        case failed(Int32, afterBytes: Int)
    }

    private static func fill(_ buffer: UnsafeMutableRawBufferPointer, from fd: Int32) -> Fill {
        var offset = 0
        while offset < buffer.count {
            let n = recv(fd, buffer.baseAddress! + offset, buffer.count - offset, 0)  // count > 0
            if n < 0, errno == EINTR { continue }
            if n < 0 { return .failed(errno, afterBytes: offset) }
            if n == 0 { return .ended(afterBytes: offset) }
            offset += n
        }
        return .full
    }
}
