import CoreFoundation
import FoundationEssentials
import KeychainModel

/// Property lists (XML or binary) read into ``KeychainValue``s, the property-list subset
/// a keychain speaks, by CoreFoundation's parsers (`CFPropertyListCreateWithData`: on Linux
/// swift-corelibs-foundation's CFBinaryPList.c and XML parser, the ones macOS reads profiles
/// with), walked with CoreFoundation's own accessors.
///
/// Neither Swift layer over it is safe for untrusted bytes in Swift 6.3, as the `profile`
/// fuzzer showed (each input is in `Fuzz/Corpus/profile`): `PropertyListDecoder`'s binary
/// reader traps on a string running past the file (`string-length-past-the-end`), and
/// `PropertyListSerialization` crashes bridging a binary plist's set to Swift
/// (`set-bridging-crash`) and leaks the error of every file it refuses. A set is not a
/// property-list type here: it is refused.
enum PropertyList {
    /// The most values a profile may hold, and how deep they may nest: a binary property
    /// list can refer to one object many times, so that a few kilobytes stand for billions.
    static let valueLimit = 200_000
    static let depthLimit = 32

    /// The dictionary at the top of `data`.
    ///
    /// - Throws: `errSecDecode` when `data` is not a property list whose top is a dictionary.
    static func dictionary(_ data: Data, what: String) throws(KeychainError) -> [String: KeychainValue] {
        guard case .dictionary(let dictionary) = try decode(data, what: what) else {
            throw KeychainError.decode("\(what) is not a property list whose top is a dictionary")
        }
        return dictionary
    }

    /// The array at the top of `data` (an encrypted profile's payloads).
    static func array(_ data: Data, what: String) throws(KeychainError) -> [KeychainValue] {
        guard case .array(let array) = try decode(data, what: what) else {
            throw KeychainError.decode("\(what) is not a property list whose top is an array")
        }
        return array
    }

    private static func decode(_ data: Data, what: String) throws(KeychainError) -> KeychainValue {
        // No error is asked for: CoreFoundation then makes none (it would be ours to free).
        let parsed: Unmanaged<CFPropertyList>? = data.withUnsafeBytes { bytes in
            guard let cfData = CFDataCreate(nil, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) else { return nil }
            return CFPropertyListCreateWithData(nil, cfData, 0, nil, nil)
        }
        guard let parsed else { throw KeychainError.decode("\(what) is not a property list") }
        let object = parsed.takeRetainedValue()
        var walk = Walk(what: what)
        return try walk.value(of: object, depth: 0)
    }

    /// One walk over a parsed list, counting values.
    private struct Walk {
        let what: String
        var values = 0

        /// One object as a value. A real number becomes an integer when it is one (a
        /// keychain has no reals; no profile key Trousseau reads is one), else its text.
        mutating func value(of object: CFTypeRef, depth: Int) throws(KeychainError) -> KeychainValue {
            values += 1
            guard values <= valueLimit else { throw KeychainError.decode("\(what) holds more than \(valueLimit) values") }
            guard depth <= depthLimit else { throw KeychainError.decode("\(what) nests values more than \(depthLimit) deep") }
            let type = CFGetTypeID(object)
            switch type {
            case CFStringGetTypeID():
                return .string(Self.string(Self.cast(object, to: CFString.self)))
            case CFDataGetTypeID():
                let data = Self.cast(object, to: CFData.self)
                let count = CFDataGetLength(data)
                guard count > 0, let bytes = CFDataGetBytePtr(data) else { return .data(Data()) }
                return .data(Data(bytes: bytes, count: count))
            case CFBooleanGetTypeID():
                return .bool(CFBooleanGetValue(Self.cast(object, to: CFBoolean.self)))
            case CFNumberGetTypeID():
                let number = Self.cast(object, to: CFNumber.self)
                guard CFNumberIsFloatType(number) else {
                    var integer: Int64 = 0
                    _ = CFNumberGetValue(number, .sInt64Type, &integer)
                    return .number(integer)
                }
                var real = 0.0
                _ = CFNumberGetValue(number, .float64Type, &real)
                return real.rounded() == real && abs(real) < 9e15 ? .number(Int64(real)) : .string(String(real))
            case CFDateGetTypeID():
                return .date(Date(timeIntervalSinceReferenceDate: CFDateGetAbsoluteTime(Self.cast(object, to: CFDate.self))))
            case CFArrayGetTypeID():
                let array = Self.cast(object, to: CFArray.self)
                var elements: [KeychainValue] = []
                for index in 0..<CFArrayGetCount(array) {
                    guard let element = CFArrayGetValueAtIndex(array, index) else { throw invalid }
                    elements.append(try value(of: Unmanaged<AnyObject>.fromOpaque(element).takeUnretainedValue(), depth: depth + 1))
                }
                return .array(elements)
            case CFDictionaryGetTypeID():
                let dictionary = Self.cast(object, to: CFDictionary.self)
                let count = CFDictionaryGetCount(dictionary)
                var keys = [UnsafeRawPointer?](repeating: nil, count: count)
                var objects = [UnsafeRawPointer?](repeating: nil, count: count)
                CFDictionaryGetKeysAndValues(dictionary, &keys, &objects)
                var entries: [String: KeychainValue] = [:]
                for index in 0..<count {
                    guard let key = keys[index], let element = objects[index] else { throw invalid }
                    let keyObject = Unmanaged<AnyObject>.fromOpaque(key).takeUnretainedValue()
                    guard CFGetTypeID(keyObject) == CFStringGetTypeID() else {
                        throw KeychainError.decode("\(what) has a dictionary key that is not a string")
                    }
                    values += 1
                    entries[Self.string(Self.cast(keyObject, to: CFString.self))] = try value(
                        of: Unmanaged<AnyObject>.fromOpaque(element).takeUnretainedValue(), depth: depth + 1)
                }
                return .dictionary(entries)
            default:
                throw KeychainError.decode("\(what) holds a value of a kind profiles do not have (a set, or a keyed-archive UID)")
            }
        }

        /// The object as the CoreFoundation type its type ID says it is. Not a checked cast:
        /// on Linux a CF object's Swift class is its bridged Foundation class, not the CF type.
        private static func cast<T: AnyObject>(_ object: AnyObject, to: T.Type) -> T {
            Unmanaged<T>.fromOpaque(Unmanaged.passUnretained(object).toOpaque()).takeUnretainedValue()
        }

        private var invalid: KeychainError { KeychainError.decode("\(what) is not a property list") }

        /// The string's UTF-8 (a lone UTF-16 surrogate becomes "?").
        private static func string(_ string: CFString) -> String {
            let range = CFRange(location: 0, length: CFStringGetLength(string))
            let encoding = CFStringBuiltInEncodings.UTF8.rawValue
            var used: CFIndex = 0
            _ = CFStringGetBytes(string, range, encoding, UInt8(ascii: "?"), false, nil, 0, &used)
            var bytes = [UInt8](repeating: 0, count: used)
            _ = CFStringGetBytes(string, range, encoding, UInt8(ascii: "?"), false, &bytes, used, &used)
            return String(decoding: bytes.prefix(used), as: UTF8.self)
        }
    }
}
