import FoundationEssentials
import KeychainModel

/// Property lists (XML or binary) read into ``KeychainValue``s, the property-list subset
/// a keychain speaks, through Foundation's `PropertyListDecoder`.
enum PropertyList {
    /// The dictionary at the top of `data`.
    ///
    /// - Throws: `errSecDecode` when `data` is not a property list whose top is a dictionary.
    static func dictionary(_ data: Data, what: String) throws(KeychainError) -> [String: KeychainValue] {
        do {
            return try PropertyListDecoder().decode([String: Node].self, from: data).mapValues(\.value)
        } catch {
            throw KeychainError.decode("\(what) is not a property list whose top is a dictionary")
        }
    }

    /// The array at the top of `data` (an encrypted profile's payloads).
    static func array(_ data: Data, what: String) throws(KeychainError) -> [KeychainValue] {
        do {
            return try PropertyListDecoder().decode([Node].self, from: data).map(\.value)
        } catch {
            throw KeychainError.decode("\(what) is not a property list whose top is an array")
        }
    }

    /// Any value; a real number becomes an integer when it is one (a keychain has no reals;
    /// no profile key that Trousseau reads is one), else its decimal text.
    struct Node: Decodable {
        let value: KeychainValue

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let dictionary = try? container.decode([String: Node].self) {
                value = .dictionary(dictionary.mapValues(\.value))
            } else if let array = try? container.decode([Node].self) {
                value = .array(array.map(\.value))
            } else if let boolean = try? container.decode(Bool.self) {
                value = .bool(boolean)
            } else if let integer = try? container.decode(Int64.self) {
                value = .number(integer)
            } else if let real = try? container.decode(Double.self) {
                value = real.rounded() == real && abs(real) < 9e15 ? .number(Int64(real)) : .string(String(real))
            } else if let date = try? container.decode(Date.self) {
                value = .date(date)
            } else if let data = try? container.decode(Data.self) {
                value = .data(data)
            } else {
                value = .string(try container.decode(String.self))
            }
        }
    }
}
