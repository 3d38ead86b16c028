import KeychainModel
import SyncProtocol

/// What a sync record's body holds. The server stores the number and never reads it; the
/// devices bind it into each record's AEAD, so a body cannot be replayed as another kind.
public enum SyncRecordType: Int, Sendable, CaseIterable, Codable {
    /// A keychain item: its attributes and secret (or, as a tombstone, its deletion).
    case item = 1
    /// A class key (A or C) wrapped by the zone key.
    case classKey = 2
    /// Which class key is current for a class (CKKS's "current key pointer").
    case keyPointer = 3
    /// A zone key shared to one device.
    case keyShare = 4
    /// A device's signed view of the zone (``SyncHead``).
    case head = 5
    /// A recovery key's member vouching for the chain it was added to (``SyncRecovery``).
    case attestation = 6
}

/// Where a record sits, as both sides of the AEAD must agree on it: everything the server
/// keeps beside the body. A body opened under any other context fails.
public struct SyncRecordContext: Sendable, Equatable, Codable {
    public var zone: SyncIdentifier
    public var record: SyncIdentifier
    public var version: Int64
    public var type: SyncRecordType
    public var tombstone: Bool

    public init(zone: SyncIdentifier, record: SyncIdentifier, version: Int64, type: SyncRecordType, tombstone: Bool = false) {
        self.zone = zone
        self.record = record
        self.version = version
        self.type = type
        self.tombstone = tombstone
    }

    /// The context as associated data: zone, record, version, type, tombstone flag.
    func write(to out: inout ByteWriter) {
        out.appendLengthPrefixed(zone.rawValue)
        out.appendLengthPrefixed(record.rawValue)
        out.appendInteger(version)
        out.appendInteger(UInt16(type.rawValue))
        out.append(tombstone ? 1 : 0)
    }
}
