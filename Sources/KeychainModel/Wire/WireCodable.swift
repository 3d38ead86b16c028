import FoundationEssentials

/// A value with one binary codec, used by both ends of a protocol (securityd's and the
/// enclave's): the same type encodes a message and decodes it, so the two cannot drift.
///
/// Decoders are bounded: every variable-length field has a limit, and a value that does
/// not fit throws `errSecDecode` before anything is allocated for it.
public protocol WireCodable: Sendable {
    /// Reads the value `encode(to:)` wrote.
    ///
    /// - Throws: `errSecDecode` for a truncated, oversized or malformed field.
    init(from reader: inout ByteReader) throws
    /// Appends the value.
    func encode(to writer: inout ByteWriter)
}

/// A value with its own wire codec that may be a property of a `Codable` message:
/// ``WireEncoder`` and ``WireDecoder`` use its codec, and it has no other `Codable` form
/// (another encoder gets an error, not a second format to keep in step).
public protocol WireLeaf: WireCodable, Codable {}

extension WireLeaf {
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(Self.self) has a wire form only"))
    }

    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "\(Self.self) has a wire form only"))
    }
}

extension SecretBytes: Codable {
    /// Secrets are read only by ``WireDecoder``, into zeroing storage.
    public convenience init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "secrets have a wire form only"))
    }

    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(count, .init(codingPath: encoder.codingPath, debugDescription: "secrets have a wire form only"))
    }
}

/// The answer of a request that returns nothing but its status: no bytes.
public struct NoResult: WireCodable, Codable, Hashable {
    public init() {}
    public init(from reader: inout ByteReader) throws {}
    public func encode(to writer: inout ByteWriter) {}
}

extension KeychainValue: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        self = try KeychainValue.decode(from: &reader)
    }
}

// Inlinable, so that a message reading or writing an optional field specialises it for the
// field's type instead of instantiating `Optional`'s metadata on every call.
extension Optional: WireCodable where Wrapped: WireCodable {
    @inlinable
    public init(from reader: inout ByteReader) throws {
        switch try reader.byte() {
        case 0: self = nil
        case 1: self = try Wrapped(from: &reader)
        default: throw KeychainError.decode("a presence byte is 0 or 1")
        }
    }

    @inlinable
    public func encode(to writer: inout ByteWriter) {
        writer.appendOptional(self) { $0.encode(to: &$1) }
    }
}

extension OSStatusCode: WireCodable {
    public init(from reader: inout ByteReader) throws {
        self.init(rawValue: try reader.integer(Int32.self))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendInteger(rawValue)
    }
}

extension Bool: WireCodable {
    public init(from reader: inout ByteReader) throws {
        switch try reader.byte() {
        case 0: self = false
        case 1: self = true
        default: throw KeychainError.decode("a boolean is 0 or 1")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.append(self ? 1 : 0)
    }
}

extension ByteReader {
    /// A dictionary value (a query or attributes).
    public mutating func dictionary() throws -> [String: KeychainValue] {
        guard case .dictionary(let entries) = try KeychainValue.decode(from: &self) else {
            throw KeychainError.decode("a query is a dictionary")
        }
        return entries
    }
}

extension AuthenticationRequest: WireLeaf {
    public func encode(to writer: inout ByteWriter) {
        var out = Data()
        encode(to: &out)
        writer.append(out)
        out.withUnsafeMutableBytes { SecretBytes.zero($0) }  // it may hold a passcode
    }
}

extension AuthenticationCapabilities: WireLeaf {
    public func encode(to writer: inout ByteWriter) {
        var out = Data()
        encode(to: &out)
        writer.append(out)
    }
}

extension ProtectionClass: WireCodable {
    public init(from reader: inout ByteReader) throws {
        guard let protection = ProtectionClass(rawValue: try reader.string(limit: 8)) else {
            throw KeychainError.decode("unknown protection class")
        }
        self = protection
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(rawValue)
    }
}

extension AccessControl: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        try self.init(encoded: reader.lengthPrefixed(limit: AccessControl.maximumEncodedSize))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(encoded)
    }
}

extension UUID: WireCodable {
    public init(from reader: inout ByteReader) throws {
        self.init(uuid: try reader.bytes(16).withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
    }

    public func encode(to writer: inout ByteWriter) {
        withUnsafeBytes(of: uuid) { writer.append(contentsOf: $0) }
    }
}
