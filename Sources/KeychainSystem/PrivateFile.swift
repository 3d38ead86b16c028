public import FoundationEssentials
public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes small owner-only files, atomically where asked.
public enum PrivateFile {
    /// Writes `bytes` to `path` (created 0600), fsynced.
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw ioError("cannot write \(path)") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)  // count > 0 here
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ioError("cannot write \(path)") }
            offset += n
        }
        guard fsync(fd) == 0 else { throw ioError("cannot sync \(path)") }
    }

    /// Replaces `path` with `data` atomically: a crash leaves the old file or the new one.
    public static func replace(_ path: String, with data: Data) throws {
        let temporary = path + ".\(getpid()).new"
        try data.withUnsafeBytes { try write($0, to: temporary) }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw ioError("cannot replace \(path)")
        }
        // Make the rename itself durable.
        syncDirectory(of: path)
    }

    /// fsyncs the directory holding `path`, so that a link, rename or unlink in it is on the
    /// disk before whatever comes next.
    public static func syncDirectory(of path: String) {
        let parent = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let directory = open(parent.isEmpty ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Creates `path` with `data` unless it exists: written to a temporary file, then linked
    /// into place, so a racing process sees no file or a whole one, never half of one.
    ///
    /// - Returns: false when another file was there first (it is left as it is).
    public static func createExclusively(_ path: String, with data: Data) throws -> Bool {
        let temporary = path + ".\(getpid()).new"
        try data.withUnsafeBytes { try write($0, to: temporary) }
        defer { unlink(temporary) }
        if link(temporary, path) == 0 {
            syncDirectory(of: path)
            return true
        }
        guard errno == EEXIST else { throw ioError("cannot create \(path)") }
        return false
    }

    /// The whole file, or nil when it does not exist (at most `limit` bytes).
    public static func read(_ path: String, limit: Int = 1 << 16) throws -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError("cannot open \(path)")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let total = try readAll(fd, into: &buffer)
        guard total <= limit else { throw KeychainError.decode("\(path) is too large") }
        return Data(buffer.prefix(total))
    }

    /// Reads until end of file or until `buffer` is full; returns the byte count.
    public static func readAll(_ fd: Int32, into buffer: inout [UInt8]) throws -> Int {
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw ioError("cannot read") }
            if n == 0 { break }
            total += n
        }
        return total
    }

    public static func ioError(_ what: String) -> KeychainError {
        SystemCall.ioError("\(what)")
    }
}
