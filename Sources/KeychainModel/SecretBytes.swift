#if canImport(Glibc)
import Glibc
#endif

/// Secret bytes (a password, a key): zeroed when dropped, readable only inside
/// ``withUnsafeBytes(_:)``, compared in constant time, never printed.
public final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only in init and deinit; between them it is read-only.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into zeroing storage.
    public init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        var array = Array(bytes)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(array.count, 1), alignment: 16)
        array.withUnsafeMutableBytes { source in
            storage.copyMemory(from: UnsafeRawBufferPointer(source))
            Self.zero(source)  // the temporary copy is secret too
        }
        buffer = storage
        count = array.count
    }

    /// `count` bytes of zeroing storage that `initialize` fills (a frame read from a socket
    /// lands here directly, so no unzeroed copy of it exists).
    public init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try initialize(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
        } catch {
            Self.zero(storage)
            storage.deallocate()
            throw error
        }
        buffer = storage
        self.count = count
    }

    /// Copies `bytes` into zeroing storage.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    /// Number of secret bytes.
    public let count: Int

    public var isEmpty: Bool { count == 0 }

    deinit {
        Self.zero(buffer)
        buffer.deallocate()
    }

    /// Calls `body` with a view of the bytes that must not escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Constant-time comparison: the time taken depends only on the lengths.
    public func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for i in 0..<a.count { difference |= a[i] ^ b[i] }
                return difference == 0
            }
        }
    }

    /// Zeroes memory in a way the optimizer may not elide.
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(base, buffer.count)
        #else
        memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecretBytes(\(count) bytes)" }
    public var debugDescription: String { description }
}
