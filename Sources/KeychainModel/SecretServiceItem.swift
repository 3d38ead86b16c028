public import FoundationEssentials

/// An item of the freedesktop Secret Service as the keychain keeps it: a generic password
/// whose account is the item's identifier, whose service and label are its label, and
/// whose arbitrary string attributes and secret content type live in the internal
/// attribute ``SecretServiceItem/attributeName`` of its encrypted metadata.
public struct SecretServiceItem: Sendable, Hashable {
    /// The last element of the item's object path: its row's UUID in 32 hexadecimal digits.
    public var id: String
    public var label: String
    public var attributes: [String: String]
    /// The `content_type` of the secret it was stored with ("text/plain" when none was given).
    public var contentType: String
    public var created: Date
    public var modified: Date
    /// The access group the item is in (the caller's scope).
    public var accessGroup: String

    public init(
        id: String, label: String, attributes: [String: String], contentType: String, created: Date, modified: Date,
        accessGroup: String
    ) {
        self.id = id
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.created = created
        self.modified = modified
        self.accessGroup = accessGroup
    }

    /// The internal generic-password attribute holding the attributes and content type.
    public static let attributeName = "ssat"
    /// The most attributes one item may have, and the longest name or value (bytes).
    public static let maximumAttributeCount = 256
    public static let maximumAttributeSize = 4096

    /// The identifier of the item whose row (persistent reference) is `uuid`: its 16 bytes in
    /// lowercase hexadecimal (a valid object path element, known without decrypting the row).
    public static func id(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { Hexadecimal.string($0) }
    }

    /// The row of identifier `id`, or nil when `id` is not of the form ``id(of:)`` gives.
    public static func uuid(ofID id: String) -> UUID? {
        let digits = Array(id.utf8)
        guard digits.count == 32, digits.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        guard let bytes = Hexadecimal.bytes(id) else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The stored form of `attributes` and `contentType`: both sorted by name, length-prefixed.
    public static func encode(attributes: [String: String], contentType: String) -> Data {
        var writer = ByteWriter()
        writer.append(1)  // format version
        writer.appendLengthPrefixed(contentType)
        writer.appendInteger(UInt32(attributes.count))
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            writer.appendLengthPrefixed(name)
            writer.appendLengthPrefixed(value)
        }
        return writer.data
    }

    /// Reads what ``encode(attributes:contentType:)`` wrote.
    ///
    /// - Throws: `errSecDecode` for anything else.
    public static func decode(_ data: Data) throws -> (attributes: [String: String], contentType: String) {
        var reader = ByteReader(data)
        guard try reader.byte() == 1 else { throw KeychainError.decode("unknown Secret Service attribute format") }
        let contentType = try reader.string(limit: maximumAttributeSize)
        let count = try reader.integer(UInt32.self)
        guard count <= maximumAttributeCount else { throw KeychainError.decode("too many Secret Service attributes") }
        var attributes: [String: String] = [:]
        for _ in 0..<count {
            let name = try reader.string(limit: maximumAttributeSize)
            attributes[name] = try reader.string(limit: maximumAttributeSize)
        }
        try reader.expectEnd("Secret Service attributes")
        return (attributes, contentType)
    }
}
