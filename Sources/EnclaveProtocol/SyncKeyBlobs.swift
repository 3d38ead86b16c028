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

/// What a sync key is for, fixed when it is made and bound into its wrapping: a zone key
/// (which wraps class keys and travels in shares), or a zone's class key for A or C (which
/// wraps records). The enclave uses each for its role alone, so a class key cannot be shared
/// as a zone key (and so re-wrapped for another class), nor a zone key wrap a record.
public enum SyncKeyRole: UInt8, Sendable, Codable, CaseIterable {
    case zone = 1
    case classA = 2
    case classC = 3

    /// The class the key is wrapped for: class A's key WhenUnlocked, so A's records open only
    /// while the device is unlocked, as the items they hold would; the others AfterFirstUnlock.
    public var protection: ProtectionClass { self == .classA ? .whenUnlocked : .afterFirstUnlock }
}

/// A sync key — a zone key, or a zone's class key for A or C — named by its id, wrapped for
/// its role's class (never a ThisDeviceOnly one: ThisDeviceOnly items have no sync key).
public struct SyncKeyBlob: Sendable, Equatable {
    static let version: UInt8 = 1

    public var keyID: SyncIdentifier
    public var role: SyncKeyRole
    public var wrapped: Data

    public init(keyID: SyncIdentifier, role: SyncKeyRole, wrapped: Data) {
        self.keyID = keyID
        self.role = role
        self.wrapped = wrapped
    }

    /// The class that wraps it.
    public var protection: ProtectionClass { role.protection }

    /// What the wrapping authenticates: a label, the id and the role.
    public var associatedData: Data {
        var out = ByteWriter("trousseau sync key")
        out.appendLengthPrefixed(keyID.rawValue)
        out.append(role.rawValue)
        return out.data
    }

    /// The bytes securityd stores.
    public var data: Data {
        var writer = ByteWriter()
        writer.append(Self.version)
        writer.appendLengthPrefixed(keyID.rawValue)
        writer.append(role.rawValue)
        writer.appendLengthPrefixed(wrapped)
        return writer.data
    }

    /// - Throws: `errSecDecode` for bytes that are not a sync key.
    public init(data: Data) throws(KeychainError) {
        do {
            var reader = ByteReader(data)
            guard try reader.byte() == Self.version, let keyID = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)),
                let role = SyncKeyRole(rawValue: try reader.byte())
            else { throw KeychainError.decode("not a sync key") }
            self.init(keyID: keyID, role: role, wrapped: try reader.lengthPrefixed(limit: 256))
            try reader.expectEnd("sync key")
        } catch {
            throw KeychainError.decode("not a sync key")
        }
    }
}
