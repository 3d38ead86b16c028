import FoundationEssentials

/// The wire's binary form of a `Codable` message: the codec every request and response of
/// both protocols (securityd's and the enclave's) shares, so that a message shape is
/// declared once, as its stored properties. (The item path's messages also have codecs
/// written by hand, for speed; tests hold each to this form byte for byte.)
///
/// The form, which ``WireDecoder`` reads back:
/// - a struct: its properties in declaration order, without names;
/// - an optional: a presence byte (0 or 1), then the value;
/// - an array: a 32-bit big-endian count, then the elements;
/// - integers big-endian at their width (`Int` as 64 bits), `Bool` one byte (0 or 1),
///   floating point as its IEEE bit pattern, `Date` as the seconds since 2001 (a `Double`);
/// - `String`, `Data` and ``SecretBytes``: a 32-bit big-endian length, then the bytes;
/// - a query or attribute dictionary (`[String: KeychainValue]`) as a ``KeychainValue``;
/// - any other ``WireCodable`` value by its own codec (tagged unions such as
///   ``KeychainValue`` and ``EnclaveKeyOperation``, formats with their own version).
///
/// Dictionaries and enums with associated values have no form here (their keys would be
/// lost); give them a ``WireCodable`` codec. Every sample of both catalogs round-trips in
/// the protocol tests, which catches such a type.
public enum WireEncoder {
    /// Appends `value` to `writer`.
    public static func encode<Value: Encodable>(_ value: Value, to writer: inout ByteWriter) {
        let sink = WireSink()
        swap(&sink.writer, &writer)  // no copy of bytes that may be secret
        defer { swap(&sink.writer, &writer) }
        // The containers below never throw, and our messages' encode(to:) only calls them.
        try! value.encode(to: WireEncoding(sink: sink))
    }
}

/// A message that is `Codable` is ``WireCodable`` through ``WireEncoder`` and ``WireDecoder``.
extension WireCodable where Self: Codable {
    public init(from reader: inout ByteReader) throws {
        self = try WireDecoder.decode(Self.self, from: &reader)
    }

    public func encode(to writer: inout ByteWriter) {
        WireEncoder.encode(self, to: &writer)
    }
}

/// An optional, seen through an existential: the encoder writes its presence byte.
protocol WireOptional {
    func encodeWire(into sink: WireSink)
}

extension Optional: WireOptional where Wrapped: Encodable {
    func encodeWire(into sink: WireSink) {
        sink.writer.append(self == nil ? 0 : 1)
        if let self { sink.encode(self) }
    }
}

/// The bytes being written, shared by the containers of one encoding.
final class WireSink {
    var writer = ByteWriter(capacity: 0)

    func encode<Value: Encodable>(_ value: Value) {
        // The types with a fixed form, told apart by their metatype (a comparison; a cast of
        // the value looks a conformance up), then those with a codec of their own.
        if Value.self == String.self {
            writer.appendLengthPrefixed(value as! String)
        } else if Value.self == Data.self {
            writer.appendLengthPrefixed(value as! Data)
        } else if Value.self == SecretBytes.self {
            writer.appendSecret(value as! SecretBytes)
        } else if Value.self == UUID.self {
            (value as! UUID).encode(to: &writer)
        } else if Value.self == Date.self {
            writer.appendInteger((value as! Date).timeIntervalSinceReferenceDate.bitPattern)
        } else if Value.self == [String: KeychainValue].self {
            KeychainValue.dictionary(value as! [String: KeychainValue]).encode(to: &writer)
        } else if let leaf = value as? any WireCodable {
            // Its own codec: a WireLeaf's (whatever Codable the compiler gave it), or a
            // message's, which comes back here through WireEncoder. The hot messages do not
            // pass here: they call their own codecs directly.
            leaf.encode(to: &writer)
        } else {
            // A struct's properties, a raw value's raw value.
            try! value.encode(to: WireEncoding(sink: self))  // as in WireEncoder.encode
        }
    }

    func encode<Integer: FixedWidthInteger>(integer: Integer) {
        writer.appendInteger(integer)
    }
}

struct WireEncoding: Encoder {
    let sink: WireSink
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedWireEncoding<Key>(sink: sink))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedWireEncoding(sink: sink) }
    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWireEncoding(sink: sink) }
}

/// A struct's properties, in order; optional ones after a presence byte.
struct KeyedWireEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: WireSink
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) { sink.writer.append(0) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) { sink.encode(value) }
    mutating func encode(_ value: Bool, forKey key: Key) { sink.writer.append(value ? 1 : 0) }
    mutating func encode(_ value: String, forKey key: Key) { sink.writer.appendLengthPrefixed(value) }
    mutating func encode(_ value: Double, forKey key: Key) { sink.encode(integer: value.bitPattern) }
    mutating func encode(_ value: Float, forKey key: Key) { sink.encode(integer: value.bitPattern) }
    mutating func encode(_ value: Int, forKey key: Key) { sink.encode(integer: Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: Int16, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: Int32, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: Int64, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt, forKey key: Key) { sink.encode(integer: UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt16, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt32, forKey key: Key) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt64, forKey key: Key) { sink.encode(integer: value) }

    // The standard library's encodeIfPresent skips a nil; the wire writes its presence byte.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) { value.encodeWire(into: sink) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) { value.encodeWire(into: sink) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedWireEncoding<NestedKey>(sink: sink))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { UnkeyedWireEncoding(sink: sink) }
    mutating func superEncoder() -> any Encoder { WireEncoding(sink: sink) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { WireEncoding(sink: sink) }
}

/// An array: its count, kept up to date in the four bytes before the first element.
struct UnkeyedWireEncoding: UnkeyedEncodingContainer {
    let sink: WireSink
    private let countOffset: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { [] }

    init(sink: WireSink) {
        self.sink = sink
        countOffset = sink.writer.bytes.count
        sink.writer.appendInteger(UInt32(0))
    }

    /// Counts the element just written.
    private mutating func counted() {
        count += 1
        sink.writer.replaceInteger(UInt32(count), at: countOffset)
    }

    mutating func encodeNil() {
        sink.writer.append(0)
        counted()
    }

    mutating func encode<T: Encodable>(_ value: T) {
        // An optional in an array has its presence byte (a struct's optional properties
        // have theirs from encodeIfPresent).
        if let optional = value as? any WireOptional { optional.encodeWire(into: sink) } else { sink.encode(value) }
        counted()
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        counted()
        return KeyedEncodingContainer(KeyedWireEncoding<NestedKey>(sink: sink))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        counted()
        return UnkeyedWireEncoding(sink: sink)
    }

    mutating func superEncoder() -> any Encoder { WireEncoding(sink: sink) }
}

/// One value: a raw-valued enum's raw value, or an optional's presence and value.
struct SingleWireEncoding: SingleValueEncodingContainer {
    let sink: WireSink
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() { sink.writer.append(0) }
    mutating func encode<T: Encodable>(_ value: T) { sink.encode(value) }
    mutating func encode(_ value: Bool) { sink.writer.append(value ? 1 : 0) }
    mutating func encode(_ value: String) { sink.writer.appendLengthPrefixed(value) }
    mutating func encode(_ value: Double) { sink.encode(integer: value.bitPattern) }
    mutating func encode(_ value: Float) { sink.encode(integer: value.bitPattern) }
    mutating func encode(_ value: Int) { sink.encode(integer: Int64(value)) }
    mutating func encode(_ value: Int8) { sink.encode(integer: value) }
    mutating func encode(_ value: Int16) { sink.encode(integer: value) }
    mutating func encode(_ value: Int32) { sink.encode(integer: value) }
    mutating func encode(_ value: Int64) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt) { sink.encode(integer: UInt64(value)) }
    mutating func encode(_ value: UInt8) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt16) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt32) { sink.encode(integer: value) }
    mutating func encode(_ value: UInt64) { sink.encode(integer: value) }
}
