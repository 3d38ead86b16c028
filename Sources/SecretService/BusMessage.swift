import CSystemd
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus error reply: its name (one the Secret Service or D-Bus specification names) and
/// a message for people. Never carries a secret.
struct BusError: Error {
    let name: String
    let message: String

    static func invalidArgs(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    static func notSupported(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message) }
    static func noSuchObject(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "No such object: \(path)")
    }
    static func noSession(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSession", message: "No session \(path) of this connection")
    }
    static func isLocked(_ message: String) -> BusError { BusError(name: "org.freedesktop.Secret.Error.IsLocked", message: message) }
    static func unknownMethod(_ interface: String, _ member: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "No method \(member) in interface \(interface) here")
    }
    static func unknownObject(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No object at path \(path)")
    }
    static func failed(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.Failed", message: message) }
    static func accessDenied(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message) }
    static func propertyReadOnly(_ name: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property \(name) is read-only")
    }
    static func unknownProperty(_ name: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "No property \(name) here")
    }
}

/// Reads a message's arguments in order with sd-bus's non-variadic readers.
struct BusReader {
    let message: OpaquePointer

    /// The message's signature: checked against the method's before any argument is read.
    var signature: String {
        sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
    }

    private func check(_ result: Int32, _ what: String) throws {
        if result <= 0 { throw BusError.invalidArgs("cannot read \(what)") }
    }

    func string() throws -> String {
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &pointer), "a string")
        return pointer.map { String(cString: $0) } ?? ""
    }

    func objectPath() throws -> String {
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "o")), &pointer), "an object path")
        return pointer.map { String(cString: $0) } ?? ""
    }

    func bool() throws -> Bool {
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value), "a boolean")
        return value != 0
    }

    /// A file descriptor (`h`), owned by the message: valid until it is freed.
    func fileDescriptor() throws -> Int32 {
        var fd: Int32 = -1
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "h")), &fd), "a file descriptor")
        return fd
    }

    /// An `ay` into ordinary memory (public keys, IVs, ciphertext: none is a plaintext secret).
    func bytes() throws -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        let result = sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size)
        guard result >= 0 else { throw BusError.invalidArgs("cannot read a byte array") }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    func enter(_ type: Character, _ contents: String) throws {
        let result = contents.withCString { sd_bus_message_enter_container(message, CChar(type.asciiValue!), $0) }
        try check(result, "a container \(type)\(contents)")
    }

    func exit() throws {
        guard sd_bus_message_exit_container(message) >= 0 else { throw BusError.invalidArgs("malformed container") }
    }

    /// The contents signature of the variant about to be read.
    func variantContents() throws -> String {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")), let contents else {
            throw BusError.invalidArgs("expected a variant")
        }
        return String(cString: contents)
    }

    func skip(_ signature: String) throws {
        guard signature.withCString({ sd_bus_message_skip(message, $0) }) >= 0 else { throw BusError.invalidArgs("malformed \(signature)") }
    }

    /// `ao`.
    func objectPaths() throws -> [String] {
        try enter("a", "o")
        var paths: [String] = []
        while sd_bus_message_at_end(message, 0) == 0 { paths.append(try objectPath()) }
        try exit()
        return paths
    }

    /// `a{ss}`; a name given twice keeps its last value.
    func stringDictionary() throws -> [String: String] {
        try enter("a", "{ss}")
        var dictionary: [String: String] = [:]
        while sd_bus_message_at_end(message, 0) == 0 {
            try enter("e", "ss")
            let key = try string()
            dictionary[key] = try string()
            try exit()
        }
        try exit()
        return dictionary
    }

    /// `a{sv}` whose values are strings or `a{ss}` (the properties of CreateItem and
    /// CreateCollection); values of other types are skipped.
    func properties() throws -> [String: PropertyInput] {
        try enter("a", "{sv}")
        var properties: [String: PropertyInput] = [:]
        while sd_bus_message_at_end(message, 0) == 0 {
            try enter("e", "sv")
            let key = try string()
            switch try variantContents() {
            case "s":
                try enter("v", "s")
                properties[key] = .string(try string())
                try exit()
            case "a{ss}":
                try enter("v", "a{ss}")
                properties[key] = .attributes(try stringDictionary())
                try exit()
            default:
                try skip("v")
                properties[key] = .other
            }
            try exit()
        }
        try exit()
        return properties
    }

    /// The Secret struct `(oayays)`: session path, parameters, value, content type.
    func secretStruct() throws -> (session: String, parameters: [UInt8], value: [UInt8], contentType: String) {
        try enter("r", "oayays")
        let session = try objectPath()
        let parameters = try bytes()
        let value = try bytes()
        let contentType = try string()
        try exit()
        return (session, parameters, value, contentType)
    }
}

/// A property value a client sent.
enum PropertyInput: Equatable {
    case string(String)
    case attributes([String: String])
    case other
}

/// A value to send: the Secret Service's property and result types.
enum BusValue {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint64(UInt64)
    case uint32(UInt32)
    case objectPaths([String])
    case attributes([String: String])
    case bytes([UInt8])

    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .uint64: "t"
        case .uint32: "u"
        case .objectPaths: "ao"
        case .attributes: "a{ss}"
        case .bytes: "ay"
        }
    }
}

/// Appends values to a message being built, with sd-bus's non-variadic writers.
struct BusWriter {
    let message: OpaquePointer
    private(set) var failed = false

    init(_ message: OpaquePointer) {
        self.message = message
    }

    private mutating func check(_ result: Int32) {
        if result < 0 { failed = true }
    }

    mutating func append(_ value: BusValue) {
        switch value {
        case .string(let string): check(string.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) })
        case .objectPath(let path): check(path.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) })
        case .bool(let bool):
            var value: Int32 = bool ? 1 : 0
            check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value))
        case .uint64(let number):
            var value = number
            check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &value))
        case .uint32(let number):
            var value = number
            check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value))
        case .objectPaths(let paths):
            open("a", "o")
            for path in paths { append(.objectPath(path)) }
            close()
        case .attributes(let attributes):
            open("a", "{ss}")
            for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
                open("e", "ss")
                append(.string(key))
                append(.string(value))
                close()
            }
            close()
        case .bytes(let bytes):
            append(bytes: bytes)
        }
    }

    mutating func append(bytes: [UInt8]) {
        check(bytes.withUnsafeBytes { sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) })
    }

    /// `value` wrapped in a variant.
    mutating func appendVariant(_ value: BusValue) {
        open("v", value.signature)
        append(value)
        close()
    }

    /// Properties as an `a{sv}`, in order.
    mutating func appendProperties(_ properties: [(String, BusValue)]) {
        open("a", "{sv}")
        for (name, value) in properties {
            open("e", "sv")
            append(.string(name))
            appendVariant(value)
            close()
        }
        close()
    }

    mutating func open(_ type: Character, _ contents: String) {
        check(contents.withCString { sd_bus_message_open_container(message, CChar(type.asciiValue!), $0) })
    }

    mutating func close() {
        check(sd_bus_message_close_container(message))
    }
}
