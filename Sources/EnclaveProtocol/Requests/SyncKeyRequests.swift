public import FoundationEssentials
public import KeychainModel
public import SyncCrypto
public import SyncProtocol

// The sync keys' requests: securityd holds blobs (SyncIdentityBlob, SyncKeyBlob) and asks the
// enclave to make, use and re-wrap the keys inside; no response carries a key. Blobs travel
// as their bytes, decoded by the enclave, which answers errSecDecode for anything else.

extension EnclaveCall {
    /// Makes this device's sync identity (its signing and encryption keys).
    public struct CreateSyncIdentity: EnclaveRequest, Codable {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var device: SyncIdentifier

        public init(device: SyncIdentifier) {
            self.device = device
        }
    }

    /// Signs a membership entry (``MembershipRecord/unsigned(account:index:previous:operation:signer:time:)``'s
    /// bytes) with the identity's Ed25519 key: the entry's bytes, signed. The enclave signs
    /// only a well-formed entry whose signer is this identity — nothing else with this key.
    public struct SignMembershipRecord: EnclaveRequest, Codable {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var record: Data

        public init(identity: Data, record: Data) {
            self.identity = identity
            self.record = record
        }
    }

    /// Makes a sync key for `role` (a zone key, or class A's or C's key).
    public struct CreateSyncKey: EnclaveRequest, Codable {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var role: SyncKeyRole

        public init(role: SyncKeyRole) {
            self.role = role
        }
    }

    /// Seals an item (or a key pointer, or a head) as a record under `parent`, signed by the
    /// identity: ``SyncRecordEnvelope``'s bytes. Key records are sealed by ``SealSyncKey``.
    public struct SealSyncRecord: EnclaveRequest, Codable {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var plaintext: SecretBytes

        public init(identity: Data, parent: Data, context: SyncRecordContext, plaintext: SecretBytes) {
            self.identity = identity
            self.parent = parent
            self.context = context
            self.plaintext = plaintext
        }
    }

    /// Opens a record written by the member `writer` whose Ed25519 key is `writerKey`: its
    /// plaintext. A key record's context is refused — a key never leaves the enclave.
    public struct OpenSyncRecord: EnclaveRequest, Codable {
        public typealias Response = SyncPlaintext
        public static let mayChangeAvailableKeys = false
        public var envelope: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var writer: SyncIdentifier
        public var writerKey: Data

        public init(envelope: Data, parent: Data, context: SyncRecordContext, writer: SyncIdentifier, writerKey: Data) {
            self.envelope = envelope
            self.parent = parent
            self.context = context
            self.writer = writer
            self.writerKey = writerKey
        }
    }

    /// Seals the sync key `key` as a class-key record under the zone key `parent`.
    public struct SealSyncKey: EnclaveRequest, Codable {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var key: Data
        public var parent: Data
        public var context: SyncRecordContext

        public init(identity: Data, key: Data, parent: Data, context: SyncRecordContext) {
            self.identity = identity
            self.key = key
            self.parent = parent
            self.context = context
        }
    }

    /// Opens a class-key record into a blob of this device (the key named by the record's id,
    /// wrapped for the class the signed record says).
    public struct OpenSyncKey: EnclaveRequest, Codable {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var envelope: Data
        public var parent: Data
        public var context: SyncRecordContext
        public var writer: SyncIdentifier
        public var writerKey: Data

        public init(envelope: Data, parent: Data, context: SyncRecordContext, writer: SyncIdentifier, writerKey: Data) {
            self.envelope = envelope
            self.parent = parent
            self.context = context
            self.writer = writer
            self.writerKey = writerKey
        }
    }

    /// Shares the zone key `key` with a member: ``SyncKeyShare``'s bytes.
    public struct SealSyncKeyShare: EnclaveRequest, Codable {
        public typealias Response = SyncBytes
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var key: Data
        public var context: SyncRecordContext
        public var recipient: SyncDevicePublicKeys

        public init(identity: Data, key: Data, context: SyncRecordContext, recipient: SyncDevicePublicKeys) {
            self.identity = identity
            self.key = key
            self.context = context
            self.recipient = recipient
        }
    }

    /// Opens a share addressed to this identity, sent by the member `sender` whose Ed25519
    /// key is `senderKey`, into a zone-key blob of this device.
    public struct OpenSyncKeyShare: EnclaveRequest, Codable {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var identity: Data
        public var share: Data
        public var context: SyncRecordContext
        public var sender: SyncIdentifier
        public var senderKey: Data

        public init(identity: Data, share: Data, context: SyncRecordContext, sender: SyncIdentifier, senderKey: Data) {
            self.identity = identity
            self.share = share
            self.context = context
            self.sender = sender
            self.senderKey = senderKey
        }
    }

    /// This device's credential on the sync server: 32 bytes derived from the identity's
    /// secret (HKDF-SHA256), so securityd stores no token and a copy of the keychain without
    /// the enclave's device key presents none. (An identity belongs to one account: a
    /// device that joins or founds another makes a new one.)
    public struct SyncCredential: EnclaveRequest, Codable {
        public typealias Response = SyncPlaintext
        public static let mayChangeAvailableKeys = false
        public var identity: Data

        public init(identity: Data) {
            self.identity = identity
        }
    }

    /// Makes a recovery key (issue 33 point 5): 32 random base32 characters (160 bits), and
    /// the sync identity derived from it, wrapped here — a member of the circle that a device
    /// which has only the key can become again when every device is lost. The key is in the
    /// response once, for the user to write down; the enclave keeps nothing.
    public struct CreateSyncRecoveryIdentity: EnclaveRequest, Codable {
        public typealias Response = SyncRecoveryIdentity
        public static let mayChangeAvailableKeys = false

        public init() {}
    }

    /// The sync identity a recovery key derives, wrapped for this device (errSecAuthFailed
    /// for text that is not a recovery key).
    public struct ImportSyncRecoveryIdentity: EnclaveRequest, Codable {
        public typealias Response = SyncBlob
        public static let mayChangeAvailableKeys = false
        public var key: SecretBytes

        public init(key: SecretBytes) {
            self.key = key
        }
    }

    /// A new recovery key and its identity's blob.
    public struct SyncRecoveryIdentity: WireCodable, Codable {
        public var key: SecretBytes
        public var blob: Data

        public init(key: SecretBytes, blob: Data) {
            self.key = key
            self.blob = blob
        }
    }

    /// A blob's bytes (``SyncIdentityBlob/data`` or ``SyncKeyBlob/data``).
    public struct SyncBlob: WireCodable, Codable {
        public var blob: Data

        public init(blob: Data) {
            self.blob = blob
        }
    }

    /// Bytes that are not secret: a signature, an envelope, a share.
    public struct SyncBytes: WireCodable, Codable {
        public var bytes: Data

        public init(bytes: Data) {
            self.bytes = bytes
        }
    }

    /// A record's plaintext, in zeroing storage.
    public struct SyncPlaintext: WireCodable, Codable {
        public var plaintext: SecretBytes

        public init(plaintext: SecretBytes) {
            self.plaintext = plaintext
        }
    }
}
