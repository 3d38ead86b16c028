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

    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// A fresh random identifier (a UUID).
    public static func random() -> SyncIdentifier {
        SyncIdentifier(UUIDString.random())!
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

/// A lowercase UUID string from the system's random generator, without Foundation.
enum UUIDString {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]], as: UTF8.self)
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}
