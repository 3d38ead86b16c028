import FoundationEssentials

/// One record as the server keeps it: an opaque, already encrypted body under a random id,
/// with the fields the server needs to order and condition writes and nothing else.
///
/// `version` counts the record's writes from 1; a write must name the version it replaces
/// (0 for a record the server has not seen), so the server can refuse a stale write and a
/// device can refuse a version lower than one it has seen. The body's AEAD binds the zone,
/// the record id, the version, the type and the tombstone flag (the client's job): the
/// server can move nothing between records unnoticed.
public struct SyncRecord: Codable, Hashable, Sendable {
    public var record: SyncIdentifier
    /// What the body holds (an item, a key, a key pointer, a share, a head), as the client
    /// numbers them; the server stores it and never interprets it.
    public var type: Int
    public var version: Int64
    public var tombstone: Bool
    public var body: Data
    /// Where the server put the write in the zone's change feed; absent in a write.
    public var seq: Int64?

    public init(record: SyncIdentifier, type: Int, version: Int64, tombstone: Bool = false, body: Data, seq: Int64? = nil) {
        self.record = record
        self.type = type
        self.version = version
        self.tombstone = tombstone
        self.body = body
        self.seq = seq
    }
}

/// The bounds every request is held to, on both sides of the wire.
public enum SyncLimits {
    /// The largest body of one record (CKKS items are far smaller; a certificate chain fits).
    public static let recordBody = 64 * 1024
    /// Writes in one atomic batch.
    public static let batchWrites = 100
    /// The largest request body the server reads.
    public static let requestBody = 8 * 1024 * 1024
    /// Records in one page of a change feed.
    public static let changesPage = 500
    /// The largest membership entry.
    public static let membershipEntry = 16 * 1024
    /// Record types are small numbers.
    public static let recordTypes = 0...255
}
