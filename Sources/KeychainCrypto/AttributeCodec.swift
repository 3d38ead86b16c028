public import FoundationEssentials
public import KeychainModel

/// The binary encoding of attributes: the plaintext of metadata blobs and the input of
/// keyed tokens. Deterministic (attributes sorted by name), versioned and bounded.
///
/// Each value is a scalar in `KeychainValue`'s wire encoding (a type tag, string/data as a
/// 32-bit big-endian length and bytes, number as a 64-bit big-endian integer, date as the
/// IEEE-754 bits of seconds since 2001, bool as a byte), so there is one value format.
public enum AttributeCodec {
    static let version: UInt8 = 1
    /// The most attributes one blob may hold; the catalogue has fewer than 64 per class.
    static let maximumCount = 256

    /// The canonical encoding of one value, for byte-exact comparison.
    public static func encodeValue(_ value: KeychainValue) -> Data {
        var out = ByteWriter()
        value.encode(to: &out)
        return out.data
    }

    /// Encodes a set of attributes, sorted by name.
    public static func encode(_ attributes: [String: KeychainValue]) -> Data {
        var out = ByteWriter(capacity: 512)
        out.append(version)
        out.appendInteger(UInt16(attributes.count))
        // The pairs sorted, not the names: no name hashed again to find its value.
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            out.append(UInt8(name.utf8.count))
            out.append(contentsOf: name.utf8)
            value.encode(to: &out)
        }
        return out.data
    }

    /// Decodes what ``encode(_:)`` wrote.
    ///
    /// - Throws: `errSecDecode` for an unknown version, a truncated or oversized field,
    ///   an unknown tag, a value that is not a scalar, or trailing bytes.
    public static func decode(_ data: Data) throws -> [String: KeychainValue] {
        var reader = ByteReader(data)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown attribute encoding version") }
        let count = Int(try reader.integer(UInt16.self))
        guard count <= maximumCount else { throw KeychainError.decode("too many attributes") }
        var result: [String: KeychainValue] = [:]
        // No rehash as it grows (a fifth of the decoding), nor when a result adds the
        // plaintext columns' attributes to a copy (`KeychainItem.attributeDictionary`).
        result.reserveCapacity(count + KeychainItem.columnAttributeCount)
        for _ in 0..<count {
            let nameLength = Int(try reader.byte())
            guard let name = try reader.utf8(nameLength), !name.isEmpty else {
                throw KeychainError.decode("attribute name is not UTF-8")
            }
            switch try KeychainValue.decode(from: &reader) {
            case .array, .dictionary: throw KeychainError.decode("attribute values are scalars")
            case let value: result[name] = value
            }
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes after attributes") }
        return result
    }
}
