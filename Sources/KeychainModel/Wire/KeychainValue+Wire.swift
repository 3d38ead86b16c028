public import FoundationEssentials

extension KeychainValue {
    /// Nesting deeper than this is refused (queries nest two levels at most).
    static let maximumDepth = 8
    /// Arrays and dictionaries longer than this are refused.
    static let maximumCount = 100_000
    /// How many elements a decoded array or dictionary makes room for at once: a query's
    /// few in one allocation, while a frame that claims many more grows only as its elements
    /// actually arrive.
    static let reservedCount = 32

    private enum Tag: UInt8 {
        case string = 1, data, number, date, bool, array, dictionary
    }

    /// Appends the wire encoding: a tag, then strings and data length-prefixed, numbers as
    /// 64-bit big-endian, dates as the bits of seconds since 2001, arrays and dictionaries
    /// as a count and their elements (dictionary keys sorted, so encoding is deterministic).
    public func encode(to out: inout ByteWriter) {
        switch self {
        case .string(let s):
            out.append(Tag.string.rawValue)
            out.appendLengthPrefixed(s)
        case .data(let d):
            out.append(Tag.data.rawValue)
            out.appendLengthPrefixed(d)
        case .number(let n):
            out.append(Tag.number.rawValue)
            out.appendInteger(n)
        case .date(let date):
            out.append(Tag.date.rawValue)
            out.appendInteger(date.timeIntervalSinceReferenceDate.bitPattern)
        case .bool(let b):
            out.append(Tag.bool.rawValue)
            out.append(b ? 1 : 0)
        case .array(let values):
            out.append(Tag.array.rawValue)
            out.appendInteger(UInt32(values.count))
            for value in values { value.encode(to: &out) }
        case .dictionary(let entries):
            out.append(Tag.dictionary.rawValue)
            out.appendInteger(UInt32(entries.count))
            // The pairs sorted, not the keys: looking each sorted key up again hashed it
            // (a fifth of a find's response). Keys are unique, so the order is the same.
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                out.appendLengthPrefixed(key)
                value.encode(to: &out)
            }
        }
    }

    /// Appends the wire encoding (``encode(to:)-(ByteWriter)``) to `out`.
    public func encode(to out: inout Data) {
        var writer = ByteWriter()
        encode(to: &writer)
        out.append(contentsOf: writer.bytes)
        writer.zero()  // the value may be an item's secret; `out`'s owner zeroes its copy
    }

    /// Reads one value written by ``encode(to:)``.
    ///
    /// - Throws: `errSecDecode` for an unknown tag, invalid UTF-8, nesting deeper than
    ///   ``maximumDepth``, a count over ``maximumCount`` or truncated input.
    public static func decode(from reader: inout ByteReader, depth: Int = 0) throws -> KeychainValue {
        guard depth < maximumDepth else { throw KeychainError.decode("values nest too deeply") }
        guard let tag = Tag(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown value tag") }
        switch tag {
        case .string: return .string(try string(&reader))
        case .data: return .data(try reader.lengthPrefixed(limit: reader.remaining))
        case .number: return .number(try reader.integer(Int64.self))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.integer(UInt64.self))))
        case .bool:
            switch try reader.byte() {
            case 0: return .bool(false)
            case 1: return .bool(true)
            default: throw KeychainError.decode("a boolean is 0 or 1")
            }
        case .array:
            let count = try Self.count(&reader)
            var values: [KeychainValue] = []
            values.reserveCapacity(Swift.min(count, Self.reservedCount))
            for _ in 0..<count { values.append(try decode(from: &reader, depth: depth + 1)) }
            return .array(values)
        case .dictionary:
            let count = try Self.count(&reader)
            var entries: [String: KeychainValue] = [:]
            entries.reserveCapacity(Swift.min(count, Self.reservedCount))
            for _ in 0..<count {
                let key = try string(&reader)
                entries[key] = try decode(from: &reader, depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    private static func string(_ reader: inout ByteReader) throws -> String {
        let length = Int(try reader.integer(UInt32.self))
        guard let string = try reader.utf8(length) else {
            throw KeychainError.decode("a string is not UTF-8")
        }
        return string
    }

    private static func count(_ reader: inout ByteReader) throws -> Int {
        let count = Int(try reader.integer(UInt32.self))
        // Every element takes at least one byte: a count beyond what remains is a lie.
        guard count <= maximumCount, count <= reader.remaining else { throw KeychainError.decode("too many elements") }
        return count
    }
}
