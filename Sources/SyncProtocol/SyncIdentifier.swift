import FoundationEssentials

/// The name of an account, a device, a zone or a record on the sync server: random to the
/// server (a UUID or random bytes in base64url), never a name a person chose, so the server
/// learns nothing from it. 1–64 characters of `A–Z a–z 0–9 - _`; anything else is refused
/// before it reaches a query or a path.
public struct SyncIdentifier: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    /// Fails on an empty, too long or ill-formed identifier.
    public init?(_ rawValue: String) {
        guard !rawValue.isEmpty, rawValue.utf8.count <= Self.maximumLength,
            rawValue.utf8.allSatisfy({ Self.allowed($0) })
        else { return nil }
        self.rawValue = rawValue
    }

    /// A new random identifier: a version-4 UUID, lowercase.
    public static func random() -> SyncIdentifier {
        SyncIdentifier(UUID().uuidString.lowercased())!  // hex digits and hyphens only
    }

    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let identifier = SyncIdentifier(raw) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a sync identifier")
        }
        self = identifier
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static func < (lhs: SyncIdentifier, rhs: SyncIdentifier) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }
}
