public import FoundationEssentials
public import KeychainModel
public import SyncCrypto
public import SyncProtocol

// Sync keys as securityd holds them: wrapped by the enclave, as enclave keys are, under a key
// derived from a local class key for this purpose alone (ClassKey.syncKeyWrapping), so no
// request that unwraps an item key or an enclave key opens one. Only the enclave ever sees
// them unwrapped, for one request.

/// This device's sync identity: its public keys in the clear and one 32-byte secret,
/// wrapped, from which the enclave derives the Ed25519 signing key and the X-Wing
/// decapsulation key (HKDF-SHA256, info "trousseau sync device keys"). Always
/// AfterFirstUnlockThisDeviceOnly: it names this device, never leaves it, and sync runs in
/// the background once the device has been unlocked once.
public struct SyncIdentityBlob: Sendable, Equatable {
    static let version: UInt8 = 1
    /// The class whose key wraps every sync identity.
    public static let protection = ProtectionClass.afterFirstUnlockThisDeviceOnly

    public var publicKeys: SyncDevicePublicKeys
    public var wrapped: Data

    public init(publicKeys: SyncDevicePublicKeys, wrapped: Data) {
        self.publicKeys = publicKeys
        self.wrapped = wrapped
    }

    /// What the wrapping authenticates: a label and the public keys (with the device id), so
    /// no blob can pass its secret off as another device's.
    public var associatedData: Data {
        var out = ByteWriter("trousseau sync identity")
        publicKeys.encode(to: &out)
        return out.data
    }

    /// The bytes securityd stores.
    public var data: Data {
        var writer = ByteWriter()
        writer.append(Self.version)
        publicKeys.encode(to: &writer)
        writer.appendLengthPrefixed(wrapped)
        return writer.data
    }

    /// - Throws: `errSecDecode` for bytes that are not a sync identity.
    public init(data: Data) throws(KeychainError) {
        do {
            var reader = ByteReader(data)
            guard try reader.byte() == Self.version else { throw KeychainError.decode("not a sync identity") }
            self.init(publicKeys: try SyncDevicePublicKeys(from: &reader), wrapped: try reader.lengthPrefixed(limit: 256))
            try reader.expectEnd("sync identity")
        } catch {
            throw KeychainError.decode("not a sync identity")
        }
    }
}

/// A sync key — a zone key, or a zone's class key for A or C — named by its id. The key is
/// wrapped for a non-ThisDeviceOnly class (WhenUnlocked for class A's key, AfterFirstUnlock
/// for the zone key and class C's): A's records open only while the device is unlocked, as
/// the items they hold would.
public struct SyncKeyBlob: Sendable, Equatable {
    static let version: UInt8 = 1
    /// The classes a sync key may be wrapped for.
    public static let protections: Set<ProtectionClass> = [.whenUnlocked, .afterFirstUnlock]

    public var keyID: SyncIdentifier
    public var protection: ProtectionClass
    public var wrapped: Data

    public init(keyID: SyncIdentifier, protection: ProtectionClass, wrapped: Data) {
        self.keyID = keyID
        self.protection = protection
        self.wrapped = wrapped
    }

    /// What the wrapping authenticates: a label, the id and the class.
    public var associatedData: Data {
        var out = ByteWriter("trousseau sync key")
        out.appendLengthPrefixed(keyID.rawValue)
        protection.encode(to: &out)
        return out.data
    }

    /// The bytes securityd stores.
    public var data: Data {
        var writer = ByteWriter()
        writer.append(Self.version)
        writer.appendLengthPrefixed(keyID.rawValue)
        protection.encode(to: &writer)
        writer.appendLengthPrefixed(wrapped)
        return writer.data
    }

    /// - Throws: `errSecDecode` for bytes that are not a sync key.
    public init(data: Data) throws(KeychainError) {
        do {
            var reader = ByteReader(data)
            guard try reader.byte() == Self.version, let keyID = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
                throw KeychainError.decode("not a sync key")
            }
            self.init(keyID: keyID, protection: try ProtectionClass(from: &reader), wrapped: try reader.lengthPrefixed(limit: 256))
            try reader.expectEnd("sync key")
            guard Self.protections.contains(protection) else { throw KeychainError.decode("not a sync key") }
        } catch {
            throw KeychainError.decode("not a sync key")
        }
    }
}
