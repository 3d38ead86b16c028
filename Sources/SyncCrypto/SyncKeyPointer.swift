import FoundationEssentials
import KeychainModel
import SyncProtocol

/// Which keys of a zone are current (CKKS's "current key pointer", one record for the zone's
/// three): the zone key that shares carry and that wraps the class keys, and the class keys
/// that new records are sealed under. A device that removes another writes a new pointer with
/// the keys it made (docs/ARCHITECTURE.md, "Removing a device"); the record is sealed under the
/// new class C key and signed like any record, and its version only grows.
///
/// `epoch` is the membership chain's length when the keys were made: a device whose chain is
/// shorter has not been given the entry that made the rotation (a server withholding a
/// removal), and says so.
///
/// Format 1 (the plaintext of the ``SyncRecordType/keyPointer`` record ``recordID``):
///
///     u8    format (1)
///     lp    zone
///     lp    zone key id
///     lp    class A key id
///     lp    class C key id
///     i64   epoch (membership chain length)
public struct SyncKeyPointer: Sendable, Equatable {
    public static let format: UInt8 = 1
    /// The zone's pointer record.
    public static let recordID = SyncIdentifier("current-keys")!

    public var zone: SyncIdentifier
    public var zoneKey: SyncIdentifier
    public var classA: SyncIdentifier
    public var classC: SyncIdentifier
    public var epoch: Int64

    public init(zone: SyncIdentifier, zoneKey: SyncIdentifier, classA: SyncIdentifier, classC: SyncIdentifier, epoch: Int64) {
        self.zone = zone
        self.zoneKey = zoneKey
        self.classA = classA
        self.classC = classC
        self.epoch = epoch
    }

    public var encoded: SecretBytes {
        var out = ByteWriter(capacity: 160)
        out.append(Self.format)
        for id in [zone, zoneKey, classA, classC] { out.appendLengthPrefixed(id.rawValue) }
        out.appendInteger(epoch)
        return SecretBytes(out.data)
    }

    public init(decoding plaintext: SecretBytes) throws(SyncCryptoError) {
        do {
            var reader = ByteReader(plaintext.withUnsafeBytes { Data($0) })
            guard try reader.byte() == Self.format else { throw SyncCryptoError(.malformed, "unknown key pointer format") }
            var ids: [SyncIdentifier] = []
            for _ in 0..<4 {
                guard let id = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
                    throw SyncCryptoError(.malformed, "a key pointer names an ill-formed id")
                }
                ids.append(id)
            }
            (zone, zoneKey, classA, classC) = (ids[0], ids[1], ids[2], ids[3])
            epoch = try reader.integer(Int64.self)
            try reader.expectEnd("key pointer")
            guard epoch >= 1 else { throw SyncCryptoError(.malformed, "a key pointer's epoch is out of range") }
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.malformed, "a key pointer is truncated or too long")
        }
    }
}
