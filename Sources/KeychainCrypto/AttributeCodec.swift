public import FoundationEssentials
public import KeychainModel

/// The binary encoding of attribute values: the plaintext of metadata blobs and the input
/// of keyed tokens. Deterministic (attributes sorted by name), versioned and bounded.
///
/// Value: a type tag, then string/data as a 32-bit big-endian length and bytes, number as
/// a 64-bit big-endian integer, date as the IEEE-754 bits of seconds since 2001, bool as a byte.
public enum AttributeCodec {
    static let version: UInt8 = 1
    /// The most attributes one blob may hold; the catalogue has fewer than 64 per class.
    static let maximumCount = 256

    private enum Tag: UInt8 {
        case string = 1, data, number, date, bool
    }

    /// Appends the canonical encoding of one attribute value.
    ///
    /// - Precondition: `value` is a scalar (validated attributes never hold arrays or dictionaries).
    public static func appendValue(_ value: KeychainValue, to out: inout Data) {
        switch value {
        case .string(let s):
            out.append(Tag.string.rawValue)
            appendLengthPrefixed(Data(s.utf8), to: &out)
        case .data(let d):
            out.append(Tag.data.rawValue)
            appendLengthPrefixed(d, to: &out)
        case .number(let n):
            out.append(Tag.number.rawValue)
            appendInteger(UInt64(bitPattern: n), to: &out)
        case .date(let date):
            out.append(Tag.date.rawValue)
            appendInteger(date.timeIntervalSinceReferenceDate.bitPattern, to: &out)
        case .bool(let b):
            out.append(Tag.bool.rawValue)
            out.append(b ? 1 : 0)
        case .array, .dictionary:
            preconditionFailure("attribute values are scalars; the query parser rejects others")
        }
    }

    /// The canonical encoding of one value, for byte-exact comparison.
    public static func encodeValue(_ value: KeychainValue) -> Data {
        var out = Data()
        appendValue(value, to: &out)
        return out
    }

    /// Encodes a set of attributes, sorted by name.
    public static func encode(_ attributes: [String: KeychainValue]) -> Data {
        var out = Data([version])
        appendInteger(UInt16(attributes.count), to: &out)
        for name in attributes.keys.sorted() {
            let nameBytes = Data(name.utf8)
            out.append(UInt8(nameBytes.count))
            out.append(nameBytes)
            appendValue(attributes[name]!, to: &out)  // name comes from the dictionary
        }
        return out
    }

    /// Decodes what ``encode(_:)`` wrote.
    ///
    /// - Throws: `errSecDecode` for an unknown version, a truncated or oversized field,
    ///   an unknown tag or trailing bytes.
    public static func decode(_ data: Data) throws -> [String: KeychainValue] {
        var reader = ByteReader(data)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown attribute encoding version") }
        let count = Int(try reader.integer(UInt16.self))
        guard count <= maximumCount else { throw KeychainError.decode("too many attributes") }
        var result: [String: KeychainValue] = [:]
        for _ in 0..<count {
            let nameLength = Int(try reader.byte())
            guard let name = String(bytes: try reader.bytes(nameLength), encoding: .utf8), !name.isEmpty else {
                throw KeychainError.decode("attribute name is not UTF-8")
            }
            result[name] = try decodeValue(&reader)
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes after attributes") }
        return result
    }

    static func decodeValue(_ reader: inout ByteReader) throws -> KeychainValue {
        guard let tag = Tag(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown value tag") }
        switch tag {
        case .string:
            let length = Int(try reader.integer(UInt32.self))
            guard let s = String(bytes: try reader.bytes(length), encoding: .utf8) else {
                throw KeychainError.decode("string attribute is not UTF-8")
            }
            return .string(s)
        case .data:
            let length = Int(try reader.integer(UInt32.self))
            return .data(Data(try reader.bytes(length)))
        case .number:
            return .number(Int64(bitPattern: try reader.integer(UInt64.self)))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.integer(UInt64.self))))
        case .bool:
            switch try reader.byte() {
            case 0: return .bool(false)
            case 1: return .bool(true)
            default: throw KeychainError.decode("boolean attribute is not 0 or 1")
            }
        }
    }

    static func appendLengthPrefixed(_ bytes: Data, to out: inout Data) {
        out.appendLengthPrefixed(bytes)
    }

    static func appendInteger<T: FixedWidthInteger>(_ value: T, to out: inout Data) {
        out.appendInteger(value)
    }
}
