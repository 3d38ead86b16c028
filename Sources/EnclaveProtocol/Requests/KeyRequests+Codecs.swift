import FoundationEssentials
import KeychainCrypto
public import KeychainModel

// The key requests run for every item an operation touches (a wrap per add, an unwrap per
// secret read): written by hand, as WireEncoder writes them — a generic container per
// message cost about a microsecond more on each side (keychain-bench, wirebench in
// docs/PERFORMANCE.md). `HotPathCodecTests` holds each to WireEncoder's bytes.

extension EnclaveCall.IndexKey {
    public init(from reader: inout ByteReader) throws {
        self.init(keychain: try UUID?(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) {
        keychain.encode(to: &writer)
    }
}

extension EnclaveCall.MetadataKey {
    public init(from reader: inout ByteReader) throws {
        self.init(try ProtectionClass(from: &reader), keychain: try UUID?(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) {
        protection.encode(to: &writer)
        keychain.encode(to: &writer)
    }
}

extension EnclaveCall.WrapItemKey {
    public init(from reader: inout ByteReader) throws {
        self.init(
            try ProtectionClass(from: &reader), try ItemKey(from: &reader), associatedData: try reader.lengthPrefixed(),
            access: try AccessControl?(from: &reader), context: try reader.optional { try $0.lengthPrefixed() }, keychain: try UUID?(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) {
        protection.encode(to: &writer)
        itemKey.encode(to: &writer)
        writer.appendLengthPrefixed(associatedData)
        access.encode(to: &writer)
        writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        keychain.encode(to: &writer)
    }
}

extension EnclaveCall.WrapItemKey.Response {
    public init(from reader: inout ByteReader) throws {
        self.init(wrapped: try reader.lengthPrefixed(), access: try AccessControl?(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(wrapped)
        access.encode(to: &writer)
    }
}

extension EnclaveCall.UnwrapItemKey {
    public init(from reader: inout ByteReader) throws {
        self.init(
            try ProtectionClass(from: &reader), wrapped: try reader.lengthPrefixed(), associatedData: try reader.lengthPrefixed(),
            access: try AccessControl?(from: &reader), context: try reader.optional { try $0.lengthPrefixed() }, keychain: try UUID?(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) {
        protection.encode(to: &writer)
        writer.appendLengthPrefixed(wrapped)
        writer.appendLengthPrefixed(associatedData)
        access.encode(to: &writer)
        writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        keychain.encode(to: &writer)
    }
}

extension EnclaveCall.UseEnclaveKey {
    public init(from reader: inout ByteReader) throws {
        self.init(blob: try reader.lengthPrefixed(), operation: try EnclaveKeyOperation(from: &reader), context: try reader.optional { try $0.lengthPrefixed() })
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(blob)
        operation.encode(to: &writer)
        writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
    }
}
