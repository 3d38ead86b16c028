public import FoundationEssentials

/// A bounds-checked reader over bytes, for every binary format we parse (attribute blobs,
/// the keybag file, enclave frames): each read past the end throws `errSecDecode`.
public struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ data: Data) { bytes = Array(data) }

    public var isAtEnd: Bool { offset == bytes.count }
    public var remaining: Int { bytes.count - offset }

    public mutating func byte() throws -> UInt8 {
        let slice = try bytes(1)
        return slice[slice.startIndex]  // slices keep their parent's indices
    }

    public mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw KeychainError.decode("truncated data") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// A big-endian integer.
    public mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        try bytes(MemoryLayout<T>.size).reduce(T.zero) { ($0 << 8) | T($1) }
    }

    /// A 32-bit-length-prefixed byte string of at most `limit` bytes.
    public mutating func lengthPrefixed(limit: Int = Int(UInt32.max)) throws -> Data {
        let length = Int(try integer(UInt32.self))
        guard length <= limit else { throw KeychainError.decode("field longer than \(limit) bytes") }
        return Data(try bytes(length))
    }

    /// A 32-bit-length-prefixed secret of at most `limit` bytes, copied into zeroing storage.
    public mutating func secret(limit: Int) throws -> SecretBytes {
        let length = Int(try integer(UInt32.self))
        guard length <= limit else { throw KeychainError.decode("secret field longer than \(limit) bytes") }
        return SecretBytes(try bytes(length))
    }

    /// An optional secret: a presence byte, then ``secret(limit:)``.
    public mutating func optionalSecret(limit: Int) throws -> SecretBytes? {
        try byte() == 1 ? try secret(limit: limit) : nil
    }

    /// Everything not read yet.
    public mutating func rest() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return bytes[offset...]
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
