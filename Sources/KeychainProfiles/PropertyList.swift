import FoundationEssentials
import KeychainModel

/// Property lists (XML or binary) read into ``KeychainValue``s, the property-list subset
/// a keychain speaks, through Foundation's `PropertyListDecoder`.
enum PropertyList {
    /// The most values a profile may hold, and how deep they may nest: a binary property
    /// list can refer to one object many times, so that a few kilobytes stand for billions.
    static let nodeLimit = 200_000
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
        let decoder = PropertyListDecoder()
        decoder.userInfo[Budget.key] = Budget()
        do {
            return try decoder.decode(Node.self, from: data).value
        } catch let error as Budget.Exceeded {
            throw KeychainError.decode("\(what) holds \(error.reason)")
        } catch {
            throw KeychainError.decode("\(what) is not a property list")
        }
    }

    /// Values decoded so far, shared by every node of one decoding.
    final class Budget: @unchecked Sendable {
        // @unchecked: one decoding, on one thread.
        static let key = CodingUserInfoKey(rawValue: "trousseau.budget")!
        var nodes = 0

        struct Exceeded: Error {
            let reason: String
        }
    }

    /// Any value, decoded once by its kind (a container is asked for before its contents,
    /// so nothing is decoded twice). A real number becomes an integer when it is one (a
    /// keychain has no reals; no profile key Trousseau reads is one), else its decimal text.
    struct Node: Decodable {
        let value: KeychainValue

        private struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let budget = decoder.userInfo[Budget.key] as? Budget {
                budget.nodes += 1
                guard budget.nodes <= PropertyList.nodeLimit else { throw Budget.Exceeded(reason: "more than \(PropertyList.nodeLimit) values") }
            }
            guard decoder.codingPath.count <= PropertyList.depthLimit else {
                throw Budget.Exceeded(reason: "values nested more than \(PropertyList.depthLimit) deep")
            }
            if let keyed = try? decoder.container(keyedBy: Key.self) {
                var dictionary: [String: KeychainValue] = [:]
                for key in keyed.allKeys { dictionary[key.stringValue] = try keyed.decode(Node.self, forKey: key).value }
                value = .dictionary(dictionary)
            } else if var unkeyed = try? decoder.unkeyedContainer() {
                var array: [KeychainValue] = []
                while !unkeyed.isAtEnd { array.append(try unkeyed.decode(Node.self).value) }
                value = .array(array)
            } else {
                let container = try decoder.singleValueContainer()
                if let boolean = try? container.decode(Bool.self) {
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
}
