import KeychainModel

/// A developer's Team ID, as Apple issues them: ten upper-case letters and digits. Every
/// access group a team claims starts with it and a dot.
public struct TeamIdentifier: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: `errSecParam` unless `rawValue` is ten characters of A–Z and 0–9.
    public init(_ rawValue: String) throws {
        let valid = rawValue.utf8.count == 10
            && rawValue.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard valid else {
            throw KeychainError(status: OSStatusCode.param, message: "a Team ID is ten characters of A-Z and 0-9, not \"\(rawValue)\"")
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// Whether `group` is in this team's namespace ("TEAMID.…").
    public func owns(_ group: String) -> Bool {
        group.count > rawValue.count + 1 && group.hasPrefix(rawValue + ".")
    }
}
