import FoundationEssentials
public import KeychainModel

// SecItem's four requests and the enclave-key use, on every call a client makes: written
// by hand, as WireEncoder writes them — a generic container per message cost about a
// microsecond more on each side (docs/PERFORMANCE.md). `HotPathCodecTests` holds each to
// WireEncoder's bytes.

extension Service.Add {
    public init(from reader: inout ByteReader) throws { self.init(try reader.dictionary()) }
    public func encode(to writer: inout ByteWriter) { KeychainValue.dictionary(attributes).encode(to: &writer) }
}

extension Service.CopyMatching {
    public init(from reader: inout ByteReader) throws { self.init(try reader.dictionary()) }
    public func encode(to writer: inout ByteWriter) { KeychainValue.dictionary(query).encode(to: &writer) }
}

extension Service.Update {
    public init(from reader: inout ByteReader) throws { self.init(try reader.dictionary(), attributes: try reader.dictionary()) }

    public func encode(to writer: inout ByteWriter) {
        KeychainValue.dictionary(query).encode(to: &writer)
        KeychainValue.dictionary(attributes).encode(to: &writer)
    }
}

extension Service.Delete {
    public init(from reader: inout ByteReader) throws { self.init(try reader.dictionary()) }
    public func encode(to writer: inout ByteWriter) { KeychainValue.dictionary(query).encode(to: &writer) }
}

extension Service.UseEnclaveKey {
    public init(from reader: inout ByteReader) throws {
        self.init(
            blob: try reader.lengthPrefixed(), operation: try EnclaveKeyOperation(from: &reader), context: try reader.optional { try $0.lengthPrefixed() },
            prompt: try reader.optional { try $0.string(limit: $0.remaining) })
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(blob)
        operation.encode(to: &writer)
        writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(prompt) { $1.appendLengthPrefixed($0) }
    }
}
