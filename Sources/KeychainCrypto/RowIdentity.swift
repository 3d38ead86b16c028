public import FoundationEssentials
public import KeychainModel

/// The plaintext identity of a stored row, authenticated as associated data by both of
/// its blobs: editing a plaintext column or moving a blob to another row makes the row
/// fail authentication (errSecDecode) instead of reading as another item.
public struct RowIdentity: Sendable, Hashable {
    /// Which of a row's two blobs the associated data is for; a blob cannot be moved
    /// between the metadata and secret columns either.
    public enum Part: UInt8, Sendable {
        case metadata = 1
        case secret = 2
    }

    /// The row format this code writes.
    public static let formatVersion: UInt8 = 1

    public var itemClass: ItemClass
    public var uuid: UUID
    public var accessGroup: String
    public var protection: ProtectionClass
    public var synchronizable: Bool
    public var tombstone: Bool
    /// The primary-key token: binding it means a row cannot be given another item's key.
    public var primaryKeyToken: Data

    public init(
        itemClass: ItemClass, uuid: UUID, accessGroup: String, protection: ProtectionClass,
        synchronizable: Bool, tombstone: Bool, primaryKeyToken: Data
    ) {
        self.itemClass = itemClass
        self.uuid = uuid
        self.accessGroup = accessGroup
        self.protection = protection
        self.synchronizable = synchronizable
        self.tombstone = tombstone
        self.primaryKeyToken = primaryKeyToken
    }

    /// The associated data for `part`: every field length-prefixed, so no two identities
    /// share an encoding.
    public func associatedData(for part: Part) -> Data {
        var out = ByteWriter(Self.associatedDataPrefix)
        out.append(Self.formatVersion)
        out.append(part.rawValue)
        out.appendLengthPrefixed(itemClass.rawValue)
        withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        out.appendLengthPrefixed(accessGroup)
        out.appendLengthPrefixed(protection.rawValue)
        out.append(synchronizable ? 1 : 0)
        out.append(tombstone ? 1 : 0)
        out.appendLengthPrefixed(primaryKeyToken)
        return out.data
    }

    private static let associatedDataPrefix = "trousseau row"
    /// Where the part's byte is: after the prefix and the format version.
    private static let partOffset = associatedDataPrefix.utf8.count + 1

    /// The associated data for `part` of the row whose other part's is `other` (made by
    /// ``associatedData(for:)``): the two differ in the part's byte only, so a find that
    /// opens both of a row's blobs builds the encoding once (a build was 2,887 instructions;
    /// the copy saves 1,600 of them).
    public static func associatedData(_ other: Data, as part: Part) -> Data {
        precondition(other.count > partOffset, "not a row's associated data")
        var data = other
        data[data.startIndex + partOffset] = part.rawValue
        return data
    }
}
