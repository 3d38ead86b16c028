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
        var done = 0
        let count = buffer.count
        return buffer.withUnsafeMutableBytes { bytes in
            while done < count {
                let n = Glibc.read(fd, bytes.baseAddress! + done, count - done)
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

    static func write(_ fd: Int32, _ buffer: [UInt8]) -> Bool {
        var done = 0
        return buffer.withUnsafeBytes { bytes in
            while done < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
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
}
