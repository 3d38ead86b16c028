public import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A bounds-checked reader over bytes, for every binary format we parse (attribute blobs,
/// the keybag file, request and enclave frames): each read past the end throws `errSecDecode`.
///
/// The bytes live in zeroing storage (``SecretBytes``): a frame may carry a passcode, a
/// secret or a key, and no copy of it outlives the reader unzeroed.
public struct ByteReader {
    private let storage: SecretBytes
    private var offset = 0

    /// Reads a copy of `data`.
    public init(_ data: Data) {
        storage = data.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Reads `bytes` in place (a frame received into zeroing storage).
    public init(_ bytes: SecretBytes) {
        storage = bytes
    }

    public var isAtEnd: Bool { offset == storage.count }
    public var remaining: Int { storage.count - offset }

    /// The next `count` bytes, for `body` only; advances past them.
    private mutating func take<R>(_ count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard count >= 0, count <= remaining else { throw KeychainError.decode("truncated data") }
        defer { offset += count }
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
    }

    /// The next `count` bytes as a string, nil when they are not UTF-8; advances past them.
    public mutating func utf8(_ count: Int) throws -> String? {
        try take(count, Self.validUTF8)
    }

    /// `bytes` as a string when they are UTF-8. Decoding repairs what is not (each invalid
    /// sequence becomes U+FFFD), so the bytes were valid exactly when the string's are the
    /// same: the standard library's contiguous fast path, where `String(validating:as:)` over
    /// bytes took its generic one (a twentieth of a find's instructions in securityd).
    static func validUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
        let string = bytes.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
        let utf8 = string.utf8
        guard utf8.count == bytes.count else { return nil }
        guard bytes.count > 0 else { return string }
        let same =
            utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
            ?? utf8.elementsEqual(bytes)
        return same ? string : nil
    }

    public mutating func byte() throws -> UInt8 {
        try take(1) { $0[0] }
    }

    public mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        try take(count) { ArraySlice($0) }
    }

    /// A big-endian integer (at most 64 bits).
    ///
    /// Inlinable so that each caller's `T` is specialised: the generic body, called across
    /// modules, cost over 2,000 instructions per 16-bit read (a witness call per byte).
    @inlinable
    public mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        T(truncatingIfNeeded: try bigEndianBits(byteCount: MemoryLayout<T>.size))
    }

    /// The next `byteCount` (≤ 8) bytes as a big-endian unsigned integer.
    @usableFromInline
    mutating func bigEndianBits(byteCount: Int) throws -> UInt64 {
        precondition(byteCount <= 8, "ByteReader.integer reads at most 64 bits")
        return try take(byteCount) { bytes in
            var bits: UInt64 = 0
            for byte in bytes { bits = bits << 8 | UInt64(byte) }
            return bits
        }
    }

    /// A 32-bit-length-prefixed byte string of at most `limit` bytes.
    public mutating func lengthPrefixed(limit: Int = Int(UInt32.max)) throws -> Data {
        let length = Int(try integer(UInt32.self))
        guard length <= limit else { throw KeychainError.decode("field longer than \(limit) bytes") }
        return try take(length) { Data($0) }
    }

    /// A 32-bit-length-prefixed UTF-8 string of at most `limit` bytes.
    public mutating func string(limit: Int) throws -> String {
        let length = Int(try integer(UInt32.self))
        guard length <= limit else { throw KeychainError.decode("field longer than \(limit) bytes") }
        guard let string = try take(length, Self.validUTF8) else { throw KeychainError.decode("a string is not UTF-8") }
        return string
    }

    /// A 32-bit-length-prefixed secret of at most `limit` bytes, copied into zeroing storage.
    public mutating func secret(limit: Int) throws -> SecretBytes {
        let length = Int(try integer(UInt32.self))
        guard length <= limit else { throw KeychainError.decode("secret field longer than \(limit) bytes") }
        return try take(length) { SecretBytes(copying: $0) }
    }

    /// An optional secret: a presence byte, then ``secret(limit:)``.
    public mutating func optionalSecret(limit: Int) throws -> SecretBytes? {
        try optional { try $0.secret(limit: limit) }
    }

    /// An optional value: a presence byte (0 or 1, anything else refused), then what `read`
    /// reads when it is 1.
    public mutating func optional<T>(_ read: (inout ByteReader) throws -> T) throws -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw KeychainError.decode("a presence byte is 0 or 1")
        }
    }

    /// Everything not read yet.
    public mutating func rest() -> ArraySlice<UInt8> {
        (try? take(remaining) { ArraySlice($0) }) ?? []  // take(remaining) cannot fail
    }

    /// Everything not read yet, copied into zeroing storage.
    public mutating func restAsSecret() -> SecretBytes {
        (try? take(remaining) { SecretBytes(copying: $0) }) ?? SecretBytes([])  // cannot fail
    }

    /// Throws unless every byte was read.
    public func expectEnd(_ what: String) throws {
        guard isAtEnd else { throw KeychainError.decode("trailing bytes in \(what)") }
    }
}

extension Data {
    /// Appends `value` big-endian.
    public mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// Appends a secret after its 32-bit big-endian length.
    public mutating func appendSecret(_ secret: SecretBytes) {
        appendInteger(UInt32(secret.count))
        secret.withUnsafeBytes { append(contentsOf: $0) }
    }

    /// Appends a presence byte and, when present, the secret (``appendSecret(_:)``).
    public mutating func appendOptionalSecret(_ secret: SecretBytes?) {
        append(secret == nil ? 0 : 1)
        if let secret { appendSecret(secret) }
    }

    /// Appends `bytes` after its 32-bit big-endian length.
    public mutating func appendLengthPrefixed(_ bytes: Data) {
        appendInteger(UInt32(bytes.count))
        append(bytes)
    }
}

extension Data {
    /// The bytes as lowercase hexadecimal digits (names and files, never secrets in logs).
    public var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
