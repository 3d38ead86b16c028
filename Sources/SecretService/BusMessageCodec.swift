import CSystemd
import KeychainModel

/// Reads and writes an sd-bus message's arguments as ``BusValue``s, whatever their types:
/// the adapter's one use of sd-bus's readers and writers (its non-variadic ones).
enum BusMessageCodec {
    private static func code(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }

    /// Every argument of `message` from where it is read to its end.
    ///
    /// - Throws: InvalidArgs for a message sd-bus cannot read.
    static func read(_ message: OpaquePointer) throws -> [BusValue] {
        var values: [BusValue] = []
        while try atEnd(message) == false { values.append(try readValue(message)) }
        return values
    }

    private static func atEnd(_ message: OpaquePointer) throws -> Bool {
        let result = sd_bus_message_at_end(message, 0)
        guard result >= 0 else { throw BusError.invalidArgs("malformed message") }
        return result > 0
    }

    private static func check(_ result: Int32) throws {
        guard result >= 0 else { throw BusError.invalidArgs("malformed message") }
    }

    /// A basic value read into `T`'s bytes: BitwiseCopyable, so those bytes are all it is
    /// (no reference sd-bus could overwrite).
    private static func basic<T: BitwiseCopyable>(_ message: OpaquePointer, _ type: CChar, _ initial: T) throws -> T {
        var value = initial
        try check(sd_bus_message_read_basic(message, type, &value))
        return value
    }

    private static func container(_ message: OpaquePointer, _ type: CChar, _ contents: String, _ body: () throws -> BusValue) throws -> BusValue {
        try check(contents.withCString { sd_bus_message_enter_container(message, type, $0) })
        let value = try body()
        try check(sd_bus_message_exit_container(message))
        return value
    }

    private static func readValue(_ message: OpaquePointer) throws -> BusValue {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contentsPointer) > 0 else { throw BusError.invalidArgs("malformed message") }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch Unicode.Scalar(UInt8(bitPattern: type)) {
        case "y": return .byte(try basic(message, type, UInt8(0)))
        case "b": return .bool(try basic(message, type, Int32(0)) != 0)
        case "n": return .int16(try basic(message, type, Int16(0)))
        case "q": return .uint16(try basic(message, type, UInt16(0)))
        case "i": return .int32(try basic(message, type, Int32(0)))
        case "u": return .uint32(try basic(message, type, UInt32(0)))
        case "x": return .int64(try basic(message, type, Int64(0)))
        case "t": return .uint64(try basic(message, type, UInt64(0)))
        case "d": return .double(try basic(message, type, Double(0)))
        case "h": return .unixFD(try basic(message, type, Int32(-1)))
        case "s", "o", "g":
            let string = try basic(message, type, UnsafePointer<CChar>?.none).map { String(cString: $0) } ?? ""
            return type == code("s") ? .string(string) : type == code("o") ? .objectPath(string) : .signature(string)
        case "a" where contents == "y":
            var pointer: UnsafeRawPointer?
            var size = 0
            try check(sd_bus_message_read_array(message, code("y"), &pointer, &size))
            return .bytes(SecretBytes(copying: UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : size)))
        case "a":
            return try container(message, type, contents) {
                var elements: [BusValue] = []
                while try atEnd(message) == false { elements.append(try readValue(message)) }
                return .array(element: contents, elements)
            }
        case "v": return try container(message, type, contents) { .variant(try readValue(message)) }
        case "r": return try container(message, type, contents) { .structure(try read(message)) }
        case "e": return try container(message, type, contents) { .dictEntry(try readValue(message), try readValue(message)) }
        default: throw BusError.invalidArgs("an argument of an unknown type")
        }
    }

    /// Appends `values` to `message`; false when sd-bus refused one.
    static func write(_ values: [BusValue], to message: OpaquePointer) -> Bool {
        values.allSatisfy { write($0, to: message) }
    }

    /// A basic value appended from `T`'s bytes (BitwiseCopyable: no reference among them).
    private static func basic<T: BitwiseCopyable>(_ message: OpaquePointer, _ type: Unicode.Scalar, _ value: T) -> Bool {
        var value = value
        return sd_bus_message_append_basic(message, code(type), &value) >= 0
    }

    private static func container(_ message: OpaquePointer, _ type: Unicode.Scalar, _ contents: String, _ values: [BusValue]) -> Bool {
        guard contents.withCString({ sd_bus_message_open_container(message, code(type), $0) }) >= 0 else { return false }
        return write(values, to: message) && sd_bus_message_close_container(message) >= 0
    }

    private static func write(_ value: BusValue, to message: OpaquePointer) -> Bool {
        switch value {
        case .byte(let byte): return basic(message, "y", byte)
        case .bool(let bool): return basic(message, "b", Int32(bool ? 1 : 0))
        case .int16(let number): return basic(message, "n", number)
        case .uint16(let number): return basic(message, "q", number)
        case .int32(let number): return basic(message, "i", number)
        case .uint32(let number): return basic(message, "u", number)
        case .int64(let number): return basic(message, "x", number)
        case .uint64(let number): return basic(message, "t", number)
        case .double(let number): return basic(message, "d", number)
        case .unixFD(let fd): return basic(message, "h", fd)
        case .string(let string), .objectPath(let string), .signature(let string):
            let type: Unicode.Scalar = if case .string = value { "s" } else if case .objectPath = value { "o" } else { "g" }
            return string.withCString { sd_bus_message_append_basic(message, code(type), $0) } >= 0
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { sd_bus_message_append_array(message, code("y"), $0.baseAddress, $0.count) } >= 0
        case .array(let element, let elements): return container(message, "a", element, elements)
        case .variant(let contents): return container(message, "v", contents.signature, [contents])
        case .structure(let fields): return container(message, "r", fields.map(\.signature).joined(), fields)
        case .dictEntry(let key, let entry): return container(message, "e", key.signature + entry.signature, [key, entry])
        }
    }
}
