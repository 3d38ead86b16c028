import FoundationEssentials

/// Reads what ``WireEncoder`` wrote (the form is described there).
///
/// Bounded as the frame is: every length and count is checked against the bytes left
/// before anything is allocated for it, so a value is never larger than its frame
/// (`ServiceWire.maximumFrameSize`, `EnclaveWire.maximumFrameSize`). A malformed field
/// is `errSecDecode`, whatever the type's own decoding threw.
public enum WireDecoder {
    public static func decode<Value: Decodable>(_ type: Value.Type, from reader: inout ByteReader) throws -> Value {
        let source = WireSource(reader)
        let value: Value
        do {
            value = try Value(from: WireDecoding(source: source))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw source.askedForKeys ? noWireForm(Value.self) : KeychainError.decode("malformed \(Value.self)")
        }
        if source.askedForKeys { throw noWireForm(Value.self) }
        if let failure = source.failure { throw failure }
        reader = source.reader
        return value
    }

    private static func noWireForm(_ type: Any.Type) -> KeychainError {
        KeychainError(status: OSStatusCode.internalComponent, message: "\(type) has a part with no wire form (a dictionary or an enum with values)")
    }
}

/// The bytes being read, shared by the containers of one decoding.
final class WireSource {
    var reader: ByteReader
    /// Whether a part asked for the keys present, which only a dictionary or an enum with
    /// values does: the wire has no keys, so such a part has no form there.
    var askedForKeys = false
    /// A failure a non-throwing requirement could not throw (``SingleWireDecoding/decodeNil()``).
    var failure: KeychainError?

    init(_ reader: ByteReader) { self.reader = reader }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        // As the encoder: the types with a fixed form by their metatype, those with a codec of
        // their own, then the type's Codable decoding (a struct's properties, a raw value).
        if type == String.self { return try string() as! Value }
        if type == Data.self { return try reader.lengthPrefixed() as! Value }
        if type == SecretBytes.self { return try reader.secret(limit: reader.remaining) as! Value }
        if type == UUID.self { return try UUID(from: &reader) as! Value }
        if type == Date.self { return try date() as! Value }
        if type == [String: KeychainValue].self { return try reader.dictionary() as! Value }
        if let leaf = type as? any WireCodable.Type { return try leaf.init(from: &reader) as! Value }
        return try Value(from: WireDecoding(source: self))
    }

    func string() throws -> String { try reader.string(limit: reader.remaining) }

    func date() throws -> Date {
        let seconds = Double(bitPattern: try reader.integer(UInt64.self))
        guard seconds.isFinite else { throw KeychainError.decode("a date is not finite") }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    func bool() throws -> Bool { try Bool(from: &reader) }
    func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T { try reader.integer(T.self) }

    /// An optional's presence byte: whether the value is absent.
    func isNil() throws -> Bool {
        switch try reader.byte() {
        case 0: true
        case 1: false
        default: throw KeychainError.decode("a presence byte is 0 or 1")
        }
    }
}

struct WireDecoding: Decoder {
    let source: WireSource
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedWireDecoding<Key>(source: source))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try UnkeyedWireDecoding(source: source) }
    func singleValueContainer() -> any SingleValueDecodingContainer { SingleWireDecoding(source: source) }
}

/// A struct's properties, in order; each key is present, an optional after its presence byte.
struct KeyedWireDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: WireSource
    var codingPath: [any CodingKey] { [] }
    /// None: the wire has no keys. Only a dictionary or an enum with values asks; the
    /// decoding then fails (``WireSource/askedForKeys``): give such a type a WireLeaf codec.
    var allKeys: [Key] {
        source.askedForKeys = true
        return []
    }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { try source.isNil() }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try source.decode(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try source.isNil() ? nil : try source.decode(type)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try source.bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try source.string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { Double(bitPattern: try source.integer()) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(bitPattern: try source.integer()) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Self.narrow(source.integer(Int64.self)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try source.integer() }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try source.integer() }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try source.integer() }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try source.integer() }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try Self.narrow(source.integer(UInt64.self)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try source.integer() }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try source.integer() }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try source.integer() }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try source.integer() }

    static func narrow<Wide: FixedWidthInteger, Narrow: FixedWidthInteger>(_ value: Wide) throws -> Narrow {
        guard let narrow = Narrow(exactly: value) else { throw KeychainError.decode("an integer out of range") }
        return narrow
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(KeyedWireDecoding<NestedKey>(source: source))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try UnkeyedWireDecoding(source: source) }
    func superDecoder() -> any Decoder { WireDecoding(source: source) }
    func superDecoder(forKey key: Key) -> any Decoder { WireDecoding(source: source) }
}

/// An array: its count, then the elements.
struct UnkeyedWireDecoding: UnkeyedDecodingContainer {
    let source: WireSource
    let count: Int?
    private(set) var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { currentIndex == count }

    init(source: WireSource) throws {
        self.source = source
        let count = Int(try source.integer(UInt32.self))
        // Every element but an empty struct takes a byte: a count beyond the bytes left
        // is a lie, and would have a loop run four billion times.
        guard count <= source.reader.remaining else { throw KeychainError.decode("a count beyond the bytes that follow") }
        self.count = count
    }

    /// Counts the element about to be read.
    private mutating func advance() throws {
        guard !isAtEnd else { throw KeychainError.decode("an array read past its count") }
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        try advance()
        return try source.isNil()
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try advance()
        return try source.decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try advance()
        return KeyedDecodingContainer(KeyedWireDecoding<NestedKey>(source: source))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try advance()
        return try UnkeyedWireDecoding(source: source)
    }

    mutating func superDecoder() -> any Decoder { WireDecoding(source: source) }
}

/// One value: a raw-valued enum's raw value, or an optional's presence and value.
struct SingleWireDecoding: SingleValueDecodingContainer {
    let source: WireSource
    var codingPath: [any CodingKey] { [] }

    /// An optional's presence byte (an optional in an array: a struct's optional
    /// properties are read by decodeIfPresent). The protocol's decodeNil cannot throw: a
    /// byte that is neither 0 nor 1 is remembered, and fails the decoding at its end.
    func decodeNil() -> Bool {
        do {
            return try source.isNil()
        } catch {
            source.failure = error as? KeychainError
            return true
        }
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try source.decode(type) }
    func decode(_ type: Bool.Type) throws -> Bool { try source.bool() }
    func decode(_ type: String.Type) throws -> String { try source.string() }
    func decode(_ type: Double.Type) throws -> Double { Double(bitPattern: try source.integer()) }
    func decode(_ type: Float.Type) throws -> Float { Float(bitPattern: try source.integer()) }
    func decode(_ type: Int.Type) throws -> Int { try KeyedWireDecoding<WireNoKey>.narrow(source.integer(Int64.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try source.integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try source.integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try source.integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try source.integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try KeyedWireDecoding<WireNoKey>.narrow(source.integer(UInt64.self)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try source.integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try source.integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try source.integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try source.integer() }
}

enum WireNoKey: CodingKey {}
