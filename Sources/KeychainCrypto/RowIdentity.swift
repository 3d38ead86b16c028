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
        var out = ByteWriter("trousseau row")
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
}
