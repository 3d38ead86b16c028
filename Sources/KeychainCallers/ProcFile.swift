#if canImport(Glibc)
import Glibc
#endif

/// A file of /proc — or of a process's root through it — read whole, as the callers' checks
/// read them: `/proc/PID/status`, `/proc/PID/environ`, `/proc/PID/cgroup`,
/// `/proc/PID/root/.flatpak-info`.
enum ProcFile {
    enum Contents: Equatable {
        case bytes([UInt8])
        /// The errno of the open or read that failed.
        case failed(Int32)
    }

    /// The file at `path`, read until its end or until at least `limit` bytes are in (nil:
    /// no limit — a process's environment is read to its end, so that nothing can hide behind
    /// a long one); EINTR is retried.
    static func read(_ path: String, limit: Int? = nil, noFollow: Bool = false) -> Contents {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (noFollow ? O_NOFOLLOW : 0))
        guard fd >= 0 else { return .failed(errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while limit.map({ bytes.count < $0 }) ?? true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return .bytes(bytes)
    }
}
