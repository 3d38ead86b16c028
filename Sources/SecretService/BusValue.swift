import KeychainModel

/// A D-Bus value, whatever carries it: the core reads its calls' arguments and writes its
/// replies and signals as these, and only the bus adapter turns them into messages.
///
/// Byte arrays (`ay`) are held in zeroing storage: in a plain session a secret's value is
/// its plaintext.
enum BusValue: Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor, owned by the message it came in (valid while the call is handled).
    case unixFD(Int32)
    case bytes(SecretBytes)
    /// An array of values of one type, `a` + `element`.
    case array(element: String, [BusValue])
    // Only the cases that hold a value directly are boxed: an enum wholly `indirect` put
    // every string and number of every message in a heap allocation of its own.
    indirect case dictEntry(BusValue, BusValue)
    case structure([BusValue])
    indirect case variant(BusValue)

    /// Its D-Bus type signature.
    var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// `ao`.
    static func objectPaths(_ paths: [String]) -> BusValue { .array(element: "o", paths.map(BusValue.objectPath)) }

    /// `a{ss}`, by name.
    static func attributes(_ attributes: [String: String]) -> BusValue {
        .array(element: "{ss}", attributes.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
    }

    /// `a{sv}`, in order.
    static func properties(_ properties: [(String, BusValue)]) -> BusValue {
        .array(element: "{sv}", properties.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }
}

/// A signature's complete types, one by one (`"a{sv}s"` → `["a{sv}", "s"]`).
func busTypes(of signature: String) -> [String] {
    var types: [String] = []
    var current = ""
    var depth = 0
    for character in signature {
        current.append(character)
        switch character {
        case "(", "{": depth += 1
        case ")", "}": depth -= 1
        default: break
        }
        if depth == 0, character != "a" {
            types.append(current)
            current = ""
        }
    }
    return types
}

// Reading arguments: the core checks a call's signature against its method's before it
// reads any, so these fail only on a value of another type than the method declares.
extension BusValue {
    private func mismatch(_ expected: String) -> BusError { .invalidArgs("expected \(expected), not \(signature)") }

    func string() throws -> String {
        guard case .string(let string) = self else { throw mismatch("a string") }
        return string
    }

    func objectPath() throws -> String {
        guard case .objectPath(let path) = self else { throw mismatch("an object path") }
        return path
    }

    func bool() throws -> Bool {
        guard case .bool(let bool) = self else { throw mismatch("a boolean") }
        return bool
    }

    func unixFD() throws -> Int32 {
        guard case .unixFD(let fd) = self else { throw mismatch("a file descriptor") }
        return fd
    }

    func bytes() throws -> SecretBytes {
        guard case .bytes(let bytes) = self else { throw mismatch("a byte array") }
        return bytes
    }

    /// What a variant holds.
    func variantContents() throws -> BusValue {
        guard case .variant(let contents) = self else { throw mismatch("a variant") }
        return contents
    }

    /// `ao`.
    func objectPaths() throws -> [String] {
        guard case .array("o", let paths) = self else { throw mismatch("ao") }
        return try paths.map { try $0.objectPath() }
    }

    /// `a{ss}`; a name given twice keeps its last value.
    func stringDictionary() throws -> [String: String] {
        guard case .array("{ss}", let entries) = self else { throw mismatch("a{ss}") }
        var dictionary: [String: String] = [:]
        for case .dictEntry(let key, let value) in entries { dictionary[try key.string()] = try value.string() }
        return dictionary
    }

    /// `a{sv}` whose values are strings or `a{ss}` (the properties of CreateItem and
    /// CreateCollection); values of other types are ``PropertyInput/other``.
    func properties() throws -> [String: PropertyInput] {
        guard case .array("{sv}", let entries) = self else { throw mismatch("a{sv}") }
        var properties: [String: PropertyInput] = [:]
        for case .dictEntry(let key, let value) in entries {
            properties[try key.string()] = PropertyInput(try value.variantContents())
        }
        return properties
    }

    /// The Secret struct `(oayays)`: session path, parameters, value, content type.
    func secretStruct() throws -> (session: String, parameters: SecretBytes, value: SecretBytes, contentType: String) {
        guard case .structure(let fields) = self, fields.count == 4 else { throw mismatch("(oayays)") }
        return (try fields[0].objectPath(), try fields[1].bytes(), try fields[2].bytes(), try fields[3].string())
    }
}

/// A property value a client sent.
enum PropertyInput: Equatable {
    case string(String)
    case attributes([String: String])
    case other

    init(_ value: BusValue) {
        switch value {
        case .string(let string): self = .string(string)
        case .array("{ss}", _): self = (try? value.stringDictionary()).map(PropertyInput.attributes) ?? .other
        default: self = .other
        }
    }
}

extension [String: PropertyInput] {
    /// The string property `name`, if the client gave it.
    ///
    /// - Throws: InvalidArgs when it is not a string.
    func string(_ name: String) throws -> String? {
        guard let given = self[name] else { return nil }
        guard case .string(let string) = given else { throw BusError.invalidArgs("\(name) is a string") }
        return string
    }
}
