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
        var frame = Data()
        frame.appendInteger(UInt32(payload.count))
        frame.append(payload)
        defer { frame.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        try frame.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))  // count > 0
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw KeychainError(status: OSStatusCode.io, message: "the connection is closed") }
                offset += n
            }
        }
    }

    /// Reads one frame; nil at a clean end of stream.
    ///
    /// - Throws: `errSecIO` for a stream cut mid-frame, `errSecDecode` for a frame longer
    ///   than `maximumSize`.
    public static func read(from fd: Int32, maximumSize: Int) throws -> Data? {
        var header = [UInt8](repeating: 0, count: 4)
        guard try readExactly(fd, &header, allowEOF: true) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumSize else { throw KeychainError.decode("a frame of \(length) bytes is larger than \(maximumSize)") }
        var payload = [UInt8](repeating: 0, count: length)
        defer { payload.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        _ = try readExactly(fd, &payload, allowEOF: false)
        return Data(payload)
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

    private static func readExactly(_ fd: Int32, _ buffer: inout [UInt8], allowEOF: Bool) throws -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
            if n < 0, errno == EINTR { continue }
            if n == 0, offset == 0, allowEOF { return false }
            guard n > 0 else { throw KeychainError(status: OSStatusCode.io, message: "the connection was cut mid-frame") }
            offset += n
        }
        return true
    }
}
