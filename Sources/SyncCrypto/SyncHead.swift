import Crypto
import FoundationEssentials
import KeychainModel
import SyncProtocol

/// One record version as a device was given it: what a head's root covers.
public struct SyncViewEntry: Sendable, Equatable {
    public var record: String
    public var version: Int64
    /// SHA-256 of the record's body as the server served it (``SyncHead/bodyHash(_:)``).
    public var hash: Data

    public init(record: String, version: Int64, hash: Data) {
        self.record = record
        self.version = version
        self.hash = hash
    }
}

/// A device's signed view of a zone (research §4.3, SUNDR's signed version stamps): after a
/// round that changed what it was given, each device writes one to the zone as a record of
/// type ``SyncRecordType/head`` under its own id (``recordID(of:)``), sealed and signed like
/// any record. It says: "at feed position `seq` of this zone, the server had given me these
/// records, at these versions, with these bodies (`root`), and this membership chain". The
/// record's version is the head's counter: signed, and refused when lower than one seen.
///
/// Every device that reads another's head rebuilds its own view at the same position and
/// compares: a server that left a record out, changed a body, or showed the two devices
/// different histories cannot make the roots agree (docs/ARCHITECTURE.md, "Signed heads").
///
/// Format 1, every field bounded:
///
///     u8    format (1)
///     lp    device  (UTF-8, ≤ 64 bytes; lp = u32 big-endian length, then the bytes)
///     lp    zone    (UTF-8, ≤ 64 bytes)
///     i64   seq     (the feed position the root was taken at)
///     32    root
///     i64   membership chain length
///     32    membership chain head (SHA-256 of its last entry)
///     i64   written (the writer's wall clock, seconds since 1970)
public struct SyncHead: Sendable, Equatable {
    public static let format: UInt8 = 1

    public var device: SyncIdentifier
    public var zone: SyncIdentifier
    public var seq: Int64
    public var root: Data
    public var membership: MembershipPin
    public var written: Int64

    public init(device: SyncIdentifier, zone: SyncIdentifier, seq: Int64, root: Data, membership: MembershipPin, written: Int64) {
        self.device = device
        self.zone = zone
        self.seq = seq
        self.root = root
        self.membership = membership
        self.written = written
    }

    /// The record a device's head is written to: `head-` and the device's id (a device id is
    /// a UUID here; one too long for that gets its SHA-256's first 16 bytes in hexadecimal).
    public static func recordID(of device: SyncIdentifier) -> SyncIdentifier {
        if let id = SyncIdentifier("head-" + device.rawValue) { return id }
        let digits = Array("0123456789abcdef")
        let digest = SHA256.hash(data: Data(device.rawValue.utf8)).prefix(16)
        return SyncIdentifier("head-" + String(digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }))!
    }

    /// The hash of a record's body, as a view keeps it.
    public static func bodyHash(_ body: Data) -> Data { Data(SHA256.hash(data: body)) }

    /// The root over a view: SHA-256 of a label and every entry, sorted by record id
    /// (bytewise), each as its id, version and body hash. Deleted records are entries too
    /// (their tombstones), so a hidden delete changes the root.
    public static func root(_ entries: [SyncViewEntry]) -> Data {
        var root = Root()
        for entry in entries.sorted(by: { $0.record.utf8.lexicographicallyPrecedes($1.record.utf8) }) {
            root.add(record: entry.record, version: entry.version, hash: entry.hash)
        }
        return root.finish()
    }

    /// A root built entry by entry, for entries that already come sorted by record id
    /// (bytewise: SQLite's `ORDER BY` on text), without holding the view in memory.
    public struct Root {
        var hasher = SHA256()
        var buffer: [UInt8] = []

        public init() { hasher.update(data: Data("trousseau sync head root 1".utf8)) }

        /// One entry: its id (u32 big-endian length, then the bytes), version (i64 big-endian)
        /// and body hash, as ``SyncHead/root(_:)`` covers it.
        public mutating func add(record: String, version: Int64, hash: Data) {
            buffer.removeAll(keepingCapacity: true)
            let id = record.utf8
            withUnsafeBytes(of: UInt32(id.count).bigEndian) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: id)
            withUnsafeBytes(of: version.bigEndian) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: hash)
            buffer.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }

        public func finish() -> Data { Data(hasher.finalize()) }
    }

    public var encoded: SecretBytes {
        var out = ByteWriter(capacity: 256)
        out.append(Self.format)
        out.appendLengthPrefixed(device.rawValue)
        out.appendLengthPrefixed(zone.rawValue)
        out.appendInteger(seq)
        out.append(root)
        out.appendInteger(membership.length)
        out.append(membership.head)
        out.appendInteger(written)
        return SecretBytes(out.data)
    }

    public init(decoding plaintext: SecretBytes) throws(SyncCryptoError) {
        do {
            var reader = ByteReader(plaintext.withUnsafeBytes { Data($0) })
            guard try reader.byte() == Self.format else { throw SyncCryptoError(.malformed, "unknown head format") }
            guard let device = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)),
                let zone = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength))
            else { throw SyncCryptoError(.malformed, "a head names an ill-formed device or zone") }
            self.device = device
            self.zone = zone
            seq = try reader.integer(Int64.self)
            root = Data(try reader.bytes(32))
            let length = try reader.integer(Int64.self)
            membership = MembershipPin(length: length, head: Data(try reader.bytes(32)))
            written = try reader.integer(Int64.self)
            try reader.expectEnd("head")
            guard seq >= 0, length >= 1 else { throw SyncCryptoError(.malformed, "a head's position or chain length is out of range") }
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.malformed, "a head is truncated or too long")
        }
    }
}
