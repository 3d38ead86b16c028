public import FoundationEssentials

/// Bytes being written, for the encoders on every request's path (wire values, tokens'
/// messages, associated data, attribute blobs).
///
/// An array under the hood: appending to one costs a few instructions, where each append
/// to a `Data` costs about a thousand on Linux (the benchmark's profile put a quarter of
/// a lookup's instructions in `Data` appends). Convert to `Data` once, at the end.
public struct ByteWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public init(_ prefix: String) {
        self.init()
        bytes.append(contentsOf: prefix.utf8)
    }

    public var data: Data { Data(bytes) }

    /// Overwrites the bytes written (they may hold a secret) before the writer goes away.
    public mutating func zero() {
        bytes.withUnsafeMutableBytes { SecretBytes.zero($0) }
    }

    public mutating func append(_ byte: UInt8) {
        bytes.append(byte)
    }

    public mutating func append(contentsOf other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    public mutating func append(_ data: Data) {
        data.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` big-endian. Inlinable, like the other generic appends here, so that
    /// each caller's `T` is specialised rather than reached through witness tables.
    @inlinable
    public mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(raw: $0) }
    }

    @usableFromInline
    mutating func append(raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    /// Overwrites the big-endian integer written at `offset` (a count known only later).
    mutating func replaceInteger<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.bigEndian) { source in
            for (index, byte) in source.enumerated() { bytes[offset + index] = byte }
        }
    }

    /// Appends `data` after its 32-bit big-endian length.
    public mutating func appendLengthPrefixed(_ data: Data) {
        appendInteger(UInt32(data.count))
        append(data)
    }

    /// Appends the UTF-8 of `string` after its 32-bit big-endian length.
    public mutating func appendLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            appendInteger(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

extension ByteWriter {
    /// Appends a secret after its 32-bit big-endian length.
    public mutating func appendSecret(_ secret: SecretBytes) {
        appendInteger(UInt32(secret.count))
        secret.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    /// Appends a presence byte and, when present, the secret (``appendSecret(_:)``).
    public mutating func appendOptionalSecret(_ secret: SecretBytes?) {
        append(secret == nil ? 0 : 1)
        if let secret { appendSecret(secret) }
    }

    /// Appends a presence byte and, when present, the value (`encode` writes it).
    @inlinable
    public mutating func appendOptional<T>(_ value: T?, _ encode: (T, inout ByteWriter) -> Void) {
        append(value == nil ? 0 : 1)
        if let value { encode(value, &self) }
    }
}
