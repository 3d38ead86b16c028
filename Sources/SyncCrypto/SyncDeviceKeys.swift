import Crypto
import FoundationEssentials
import KeychainModel
import SyncProtocol

/// A device's public half, as the membership chain lists it: the key that verifies what the
/// device signs (records, chain entries, key shares) and the key that key shares are sealed
/// to. The encryption key is X-Wing (ML-KEM-768 with X25519): shares sit on the server for
/// years, so they are sealed against a later quantum computer too.
public struct SyncDevicePublicKeys: Sendable, Equatable, WireLeaf {
    public static let signingKeyLength = 32
    public static let encryptionKeyLength = 1216

    public let device: SyncIdentifier
    public let signing: Curve25519.Signing.PublicKey
    public let encryption: XWingMLKEM768X25519.PublicKey

    public init(device: SyncIdentifier, signing: Curve25519.Signing.PublicKey, encryption: XWingMLKEM768X25519.PublicKey) {
        self.device = device
        self.signing = signing
        self.encryption = encryption
    }

    public static func == (lhs: SyncDevicePublicKeys, rhs: SyncDevicePublicKeys) -> Bool {
        lhs.device == rhs.device && lhs.signing.rawRepresentation == rhs.signing.rawRepresentation
            && lhs.encryption.rawRepresentation == rhs.encryption.rawRepresentation
    }

    /// In a message between processes (securityd and the enclave), as the chain writes it.
    public init(from reader: inout ByteReader) throws {
        self = try Self.read(from: &reader)
    }

    public func encode(to writer: inout ByteWriter) { write(to: &writer) }

    func write(to out: inout ByteWriter) {
        out.appendLengthPrefixed(device.rawValue)
        out.append(signing.rawRepresentation)
        out.append(encryption.rawRepresentation)
    }

    static func read(from reader: inout ByteReader) throws -> SyncDevicePublicKeys {
        guard let device = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
            throw SyncCryptoError(.malformed, "a device id is ill-formed")
        }
        return SyncDevicePublicKeys(
            device: device,
            signing: try Curve25519.Signing.PublicKey(rawRepresentation: reader.bytes(signingKeyLength)),
            encryption: try XWingMLKEM768X25519.PublicKey(rawRepresentation: reader.bytes(encryptionKeyLength)))
    }
}

/// A device's private keys for sync: an Ed25519 signing key and an X-Wing decapsulation key,
/// each kept as its 32-byte seed (``seeds``, 64 bytes in zeroing storage) so the enclave
/// holds them as it holds class keys.
public struct SyncDeviceKeys: Sendable {
    public let device: SyncIdentifier
    public let signing: Curve25519.Signing.PrivateKey
    public let encryption: XWingMLKEM768X25519.PrivateKey

    /// Fresh keys for `device`.
    public static func generate(device: SyncIdentifier) throws -> SyncDeviceKeys {
        SyncDeviceKeys(device: device, signing: Curve25519.Signing.PrivateKey(), encryption: try XWingMLKEM768X25519.PrivateKey.generate())
    }

    /// Keys from their ``seeds``.
    public init(device: SyncIdentifier, seeds: SecretBytes) throws(SyncCryptoError) {
        guard seeds.count == 64 else { throw SyncCryptoError(.malformed, "device key seeds are 64 bytes") }
        do {
            let (signing, encryption) = try seeds.withUnsafeBytes { bytes in
                (try Curve25519.Signing.PrivateKey(rawRepresentation: bytes[0..<32]),
                 try XWingMLKEM768X25519.PrivateKey(seedRepresentation: bytes[32..<64], publicKey: nil))
            }
            self.init(device: device, signing: signing, encryption: encryption)
        } catch {
            throw SyncCryptoError(.malformed, "device key seeds do not make keys")
        }
    }

    init(device: SyncIdentifier, signing: Curve25519.Signing.PrivateKey, encryption: XWingMLKEM768X25519.PrivateKey) {
        self.device = device
        self.signing = signing
        self.encryption = encryption
    }

    /// The signing key's 32 bytes, then the X-Wing seed's 32.
    public var seeds: SecretBytes {
        var signingBytes = signing.rawRepresentation, encryptionSeed = encryption.seedRepresentation
        defer {
            signingBytes.resetBytes(in: 0..<signingBytes.count)
            encryptionSeed.resetBytes(in: 0..<encryptionSeed.count)
        }
        return SecretBytes(count: 64) { buffer in
            signingBytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<32]).copyMemory(from: $0) }
            encryptionSeed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[32..<64]).copyMemory(from: $0) }
        }
    }

    public var publicKeys: SyncDevicePublicKeys {
        SyncDevicePublicKeys(device: device, signing: signing.publicKey, encryption: encryption.publicKey)
    }
}

extension SyncDeviceKeys: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Names the device only: the private keys never reach a log, a test's failure message
    /// or a debugger's summary.
    public var description: String { "SyncDeviceKeys(\(device), private)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["device": device]) }
}
