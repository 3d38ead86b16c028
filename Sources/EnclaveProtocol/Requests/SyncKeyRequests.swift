public import FoundationEssentials
public import KeychainModel
public import SyncCrypto
public import SyncProtocol

// The sync keys' requests: securityd holds blobs (SyncIdentityBlob, SyncKeyBlob) and asks the
// enclave to make, use and re-wrap the keys inside; no response carries a key. Blobs travel
// as their bytes, decoded by the enclave, which answers errSecDecode for anything else.

extension EnclaveCall {
    /// Makes this device's sync identity (its signing and encryption keys).
    @WireStruct
    public struct CreateSyncIdentity: EnclaveRequest {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var device: SyncIdentifier
    }

    /// Signs a membership entry (``MembershipRecord/unsigned(account:index:previous:operation:signer:time:)``'s
    /// bytes) with the identity's Ed25519 key: the entry's bytes, signed. The enclave signs
    /// only a well-formed entry whose signer is this identity — nothing else with this key.
    @WireStruct
    public struct SignMembershipRecord: EnclaveRequest {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var record: Data
    }

    /// Makes a sync key for `role` (a zone key, or class A's or C's key).
    @WireStruct
    public struct CreateSyncKey: EnclaveRequest {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var role: SyncKeyRole
    }

    /// Seals an item (or a key pointer, or a head) as a record under `parent`, signed by the
    /// identity: ``SyncRecordEnvelope``'s bytes. Key records are sealed by ``SealSyncKey``.
    @WireStruct
    public struct SealSyncRecord: EnclaveRequest {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var plaintext: SecretBytes
    }

    /// Opens a record written by the member `writer` whose Ed25519 key is `writerKey`: its
    /// plaintext. A key record's context is refused — a key never leaves the enclave.
    @WireStruct
    public struct OpenSyncRecord: EnclaveRequest {
        public typealias Response = SyncPlaintext
        public static let mayChangeAvailableKeys = false
        public var envelope: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var writer: SyncIdentifier
        public var writerKey: Data
    }

    /// Seals the sync key `key` as a class-key record under the zone key `parent`.
    @WireStruct
    public struct SealSyncKey: EnclaveRequest {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var key: Data
        public var parent: Data
        public var context: SyncRecordContext
    }

    /// Opens a class-key record into a blob of this device (the key named by the record's id,
    /// wrapped for the class the signed record says).
    @WireStruct
    public struct OpenSyncKey: EnclaveRequest {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var envelope: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var writer: SyncIdentifier
        public var writerKey: Data
    }

    /// Shares the zone key `key` with a member: ``SyncKeyShare``'s bytes.
    @WireStruct
    public struct SealSyncKeyShare: EnclaveRequest {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var key: Data
        public var context: SyncRecordContext
        public var recipient: SyncDevicePublicKeys
    }

    /// Opens a share addressed to this identity, sent by the member `sender` whose Ed25519
    /// key is `senderKey`, into a zone-key blob of this device.
    @WireStruct
    public struct OpenSyncKeyShare: EnclaveRequest {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var share: Data
        public var context: SyncRecordContext
        public var sender: SyncIdentifier
        public var senderKey: Data
    }

    /// This device's credential on the sync server: 32 bytes derived from the identity's
    /// secret (HKDF-SHA256), so securityd stores no token and a copy of the keychain without
    /// the enclave's device key presents none. (An identity belongs to one account: a
    /// device that joins or founds another makes a new one.)
    @WireStruct
    public struct SyncCredential: EnclaveRequest {
        public typealias Response = SyncPlaintext
        public static let mayChangeAvailableKeys = false
        public var identity: Data
    }

    /// Makes a recovery key (issue 33 point 5): 32 random base32 characters (160 bits), and
    /// the sync identity derived from it, wrapped here — a member of the circle that a device
    /// which has only the key can become again when every device is lost. The key is in the
    /// response once, for the user to write down; the enclave keeps nothing.
    @WireStruct
    public struct CreateSyncRecoveryIdentity: EnclaveRequest {
        public typealias Response = SyncRecoveryIdentity
        public static let mayChangeAvailableKeys = false
    }

    /// The sync identity a recovery key derives, wrapped for this device (errSecAuthFailed
    /// for text that is not a recovery key).
    @WireStruct
    public struct ImportSyncRecoveryIdentity: EnclaveRequest {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var key: SecretBytes
    }

    /// A new recovery key and its identity's blob.
    @WireStruct
    public struct SyncRecoveryIdentity: WireCodable {
        public var key: SecretBytes
        public var blob: Data
    }

    /// A blob's bytes (``SyncIdentityBlob/data`` or ``SyncKeyBlob/data``).
    @WireStruct
    public struct SyncBlob: WireCodable {
        public var blob: Data
    }

    /// Bytes that are not secret: a signature, an envelope, a share.
    @WireStruct
    public struct SyncBytes: WireCodable {
        public var bytes: Data
    }

    /// A record's plaintext, in zeroing storage.
    @WireStruct
    public struct SyncPlaintext: WireCodable {
        public var plaintext: SecretBytes
    }
}
