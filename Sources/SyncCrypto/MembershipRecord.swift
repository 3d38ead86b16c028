import Crypto
import FoundationEssentials
import KeychainModel
import SyncProtocol

/// What one entry of the membership chain does.
public enum MembershipOperation: Sendable, Equatable {
    /// The chain's first entry: the founding device, signed by itself.
    case genesis(SyncDevicePublicKeys)
    /// A device joins; signed by a member (the one that approved it).
    case add(SyncDevicePublicKeys)
    /// A device leaves or is removed; signed by a member (itself or another).
    case remove(SyncIdentifier)
}

/// One signed, hash-linked entry of an account's membership chain: the bytes a device
/// uploads as ``MembershipEntry/entry`` and every device verifies (``MembershipState``). The
/// server stores and orders them and can refuse them, but it cannot make one: it holds no
/// member's signing key.
///
/// Format 1:
///
///     u8    format (1)
///     lp    account id             (lp = u32 big-endian length, then the bytes)
///     u64   index                  (big-endian; 0 for genesis)
///     32    previous entry's hash  (SHA-256 of its encoded bytes; zeros for genesis)
///     u8    operation              (1 genesis, 2 add, 3 remove)
///     ...   genesis, add: lp device id, 32 Ed25519 key, 1216 X-Wing key; remove: lp device id
///     lp    signer's device id
///     u64   signer's clock, seconds since 1970 (shown to people, never trusted)
///     64    Ed25519 signature over "trousseau membership 1" and every byte above
public struct MembershipRecord: Sendable, Equatable {
    public static let format: UInt8 = 1
    static let signatureLength = 64
    public static let genesisPrevious = Data(count: 32)

    public var account: SyncIdentifier
    public var index: Int64
    public var previous: Data
    public var operation: MembershipOperation
    public var signer: SyncIdentifier
    public var time: Int64
    public var signature: Data

    /// A new entry, signed by `signer`.
    public static func sign(
        account: SyncIdentifier, index: Int64, previous: Data, operation: MembershipOperation, signer: SyncDeviceKeys,
        time: Int64 = Int64(Date().timeIntervalSince1970)
    ) throws -> MembershipRecord {
        var record = MembershipRecord(
            account: account, index: index, previous: previous, operation: operation, signer: signer.device, time: time, signature: Data())
        record.signature = try signer.signing.signature(for: record.signedBytes)
        return record
    }

    /// An entry to be signed where the device's keys are (the enclave): every field but the
    /// signature, which is 64 zero bytes until ``signed(with:)``.
    public static func unsigned(
        account: SyncIdentifier, index: Int64, previous: Data, operation: MembershipOperation, signer: SyncIdentifier,
        time: Int64 = Int64(Date().timeIntervalSince1970)
    ) -> MembershipRecord {
        MembershipRecord(
            account: account, index: index, previous: previous, operation: operation, signer: signer, time: time,
            signature: Data(count: signatureLength))
    }

    /// The entry signed with `key` (the signer's).
    public func signed(with key: Curve25519.Signing.PrivateKey) throws -> MembershipRecord {
        var record = self
        record.signature = try key.signature(for: signedBytes)
        return record
    }

    /// The chain's first entry for a new account, founded by `founder`.
    public static func genesis(account: SyncIdentifier, founder: SyncDeviceKeys) throws -> MembershipRecord {
        try sign(account: account, index: 0, previous: genesisPrevious, operation: .genesis(founder.publicKeys), signer: founder)
    }

    /// SHA-256 of the encoded entry: what the next entry's `previous` names, and what a
    /// device pins.
    public var hash: Data { Data(SHA256.hash(data: encoded)) }

    func isSigned(by key: Curve25519.Signing.PublicKey) -> Bool {
        key.isValidSignature(signature, for: signedBytes)
    }

    var signedBytes: Data {
        var out = ByteWriter("trousseau membership 1")
        writeBody(to: &out)
        return out.data
    }

    private func writeBody(to out: inout ByteWriter) {
        out.append(Self.format)
        out.appendLengthPrefixed(account.rawValue)
        out.appendInteger(UInt64(bitPattern: index))
        out.append(previous)
        switch operation {
        case .genesis(let keys):
            out.append(1)
            keys.write(to: &out)
        case .add(let keys):
            out.append(2)
            keys.write(to: &out)
        case .remove(let device):
            out.append(3)
            out.appendLengthPrefixed(device.rawValue)
        }
        out.appendLengthPrefixed(signer.rawValue)
        out.appendInteger(UInt64(bitPattern: time))
    }

    // MARK: Bytes

    /// The bytes a device uploads.
    public var encoded: Data {
        var out = ByteWriter(capacity: 1500)
        writeBody(to: &out)
        out.append(signature)
        return out.data
    }

    /// Reads an entry the server returned; throws `.malformed` on anything but format 1 whole.
    /// Reading checks the form only: ``MembershipState`` checks the signature and the links.
    public init(decoding bytes: Data) throws(SyncCryptoError) {
        guard bytes.count <= SyncLimits.membershipEntry else { throw SyncCryptoError(.malformed, "a membership entry is too long") }
        do {
            var reader = ByteReader(bytes)
            guard try reader.byte() == Self.format else { throw SyncCryptoError(.malformed, "unknown membership entry format") }
            guard let account = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
                throw SyncCryptoError(.malformed, "a membership entry names an ill-formed account")
            }
            self.account = account
            index = Int64(bitPattern: try reader.integer(UInt64.self))
            guard index >= 0 else { throw SyncCryptoError(.malformed, "a membership entry's index is negative") }
            previous = Data(try reader.bytes(32))
            switch try reader.byte() {
            case 1: operation = .genesis(try SyncDevicePublicKeys.read(from: &reader))
            case 2: operation = .add(try SyncDevicePublicKeys.read(from: &reader))
            case 3:
                guard let device = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
                    throw SyncCryptoError(.malformed, "a membership entry names an ill-formed device")
                }
                operation = .remove(device)
            default: throw SyncCryptoError(.malformed, "unknown membership operation")
            }
            guard let signer = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
                throw SyncCryptoError(.malformed, "a membership entry names an ill-formed signer")
            }
            self.signer = signer
            time = Int64(bitPattern: try reader.integer(UInt64.self))
            signature = Data(try reader.bytes(Self.signatureLength))
            try reader.expectEnd("membership entry")
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.malformed, "a membership entry is truncated, too long or holds a bad key")
        }
    }

    init(account: SyncIdentifier, index: Int64, previous: Data, operation: MembershipOperation, signer: SyncIdentifier, time: Int64, signature: Data) {
        self.account = account
        self.index = index
        self.previous = previous
        self.operation = operation
        self.signer = signer
        self.time = time
        self.signature = signature
    }
}
