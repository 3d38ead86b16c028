import CoreFoundation
import Foundation
import KeychainModel

/// Property lists (XML or binary) read into ``KeychainValue``s, the property-list subset
/// a keychain speaks, by Foundation's `PropertyListSerialization` — on Linux, CoreFoundation's
/// parsers (CFBinaryPList.c, the XML parser), the ones macOS reads profiles with.
///
/// Not `PropertyListDecoder`: its binary reader (FoundationEssentials' `BPlistMap`, Swift
/// 6.3) traps on a string whose length runs past the file, which the `profile` fuzzer found
/// within seconds (`Fuzz/Corpus/profile/string-length-past-the-end`); CoreFoundation's
/// refuses it. Data CoreFoundation refuses is refused before `PropertyListSerialization`
/// sees it: its error path leaks the CFError it converts (swift-corelibs-foundation, Swift 6.3;
/// LeakSanitizer in the `profile` fuzzer), and securityd would leak on every bad file.
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
        guard parses(data) else { throw KeychainError.decode("\(what) is not a property list") }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw KeychainError.decode("\(what) is not a property list")
        }
        var values = 0
        return try value(of: object, depth: 0, values: &values, what: what)
    }

    /// Whether CoreFoundation reads `data` as a property list, asked without an error to
    /// return (so none is made).
    private static func parses(_ data: Data) -> Bool {
        let parsed: Unmanaged<CFPropertyList>? = data.withUnsafeBytes { bytes in
            guard let cfData = CFDataCreate(nil, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) else { return nil }
            return CFPropertyListCreateWithData(nil, cfData, 0, nil, nil)
        }
        parsed?.release()
        return parsed != nil
    }

    /// One object of the parsed list as a value. A real number becomes an integer when it is
    /// one (a keychain has no reals; no profile key Trousseau reads is one), else its text.
    private static func value(of object: Any, depth: Int, values: inout Int, what: String) throws(KeychainError) -> KeychainValue {
        values += 1
        guard values <= valueLimit else { throw KeychainError.decode("\(what) holds more than \(valueLimit) values") }
        guard depth <= depthLimit else { throw KeychainError.decode("\(what) nests values more than \(depthLimit) deep") }
        // Booleans first: a number bridges to Bool too, but only a boolean is one.
        if type(of: object) == Bool.self, let boolean = object as? Bool { return .bool(boolean) }
        switch object {
        case let string as String:
            return .string(string)
        case let data as Data:
            return .data(data)
        case let date as Date:
            return .date(date)
        case let number as NSNumber:
            let real = number.doubleValue
            if let integer = object as? Int64 { return .number(integer) }
            return real.rounded() == real && abs(real) < 9e15 ? .number(Int64(real)) : .string(String(real))
        case let array as [Any]:
            var result: [KeychainValue] = []
            for element in array { result.append(try value(of: element, depth: depth + 1, values: &values, what: what)) }
            return .array(result)
        case let dictionary as [AnyHashable: Any]:
            var result: [String: KeychainValue] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String else { throw KeychainError.decode("\(what) has a dictionary key that is not a string") }
                result[key] = try value(of: element, depth: depth + 1, values: &values, what: what)
            }
            return .dictionary(result)
        default:
            throw KeychainError.decode("\(what) holds a value of a kind property lists do not have")
        }
    }
}
