#if canImport(Glibc)
import Glibc
#endif

/// The other end of the socket floor: a process that sends back every message of
/// `size` bytes it reads on descriptor 3, until end of stream.
enum EchoPeer {
    static let argument = "--echo-peer"

    static func serve(size: Int) -> Never {
        var buffer = [UInt8](repeating: 0, count: size)
        while SocketMessage.read(3, &buffer), SocketMessage.write(3, buffer) {}
        exit(0)
    }
}

/// Whole fixed-size messages over a stream socket.
enum SocketMessage {
    /// Fills `buffer`; false at end of stream or on an error.
    static func read(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        buffer.withUnsafeMutableBytes { bytes in
            whole(bytes.count) { done in Glibc.read(fd, bytes.baseAddress! + done, bytes.count - done) }
        }
    }

    /// Writes all of `buffer`; false on an error.
    static func write(_ fd: Int32, _ buffer: [UInt8]) -> Bool {
        buffer.withUnsafeBytes { bytes in
            whole(bytes.count) { done in Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done) }
        }
    }

    /// Repeats `transfer` (given the bytes done so far) until `count` bytes are done,
    /// retrying on EINTR; false at end of stream or on an error.
    private static func whole(_ count: Int, _ transfer: (Int) -> Int) -> Bool {
        var done = 0
        while done < count {
            let n = transfer(done)
            if n > 0 {
                done += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
