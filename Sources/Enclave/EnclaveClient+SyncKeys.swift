public import FoundationEssentials
public import EnclaveProtocol
public import KeychainModel
public import SyncCrypto
public import SyncProtocol

// The sync keys' requests (SyncKeyRequests): securityd holds blobs; the enclave makes, uses
// and re-wraps the keys.
extension EnclaveClient {
    /// A new sync identity for `device`.
    public func createSyncIdentity(device: SyncIdentifier) throws -> SyncIdentityBlob {
        try SyncIdentityBlob(data: call(EnclaveCall.CreateSyncIdentity(device: device)).blob)
    }

    /// A new recovery key (to show once) and the identity it derives, wrapped for this device.
    public func createSyncRecoveryIdentity() throws -> (key: SecretBytes, identity: SyncIdentityBlob) {
        let made = try call(EnclaveCall.CreateSyncRecoveryIdentity())
        return (made.key, try SyncIdentityBlob(data: made.blob))
    }

    /// The identity the recovery key `key` derives, wrapped for this device.
    public func importSyncRecoveryIdentity(_ key: SecretBytes) throws -> SyncIdentityBlob {
        try SyncIdentityBlob(data: call(EnclaveCall.ImportSyncRecoveryIdentity(key: key)).blob)
    }

    /// `record` (an unsigned membership entry whose signer is `identity`'s device), signed.
    public func signMembershipRecord(_ record: MembershipRecord, as identity: SyncIdentityBlob) throws -> MembershipRecord {
        try MembershipRecord(decoding: call(EnclaveCall.SignMembershipRecord(identity: identity.data, record: record.encoded)).bytes)
    }

    /// This device's bearer credential on the sync server.
    public func syncCredential(identity: SyncIdentityBlob) throws -> SecretBytes {
        try call(EnclaveCall.SyncCredential(identity: identity.data)).plaintext
    }

    /// A new zone key or class key.
    public func createSyncKey(role: SyncKeyRole) throws -> SyncKeyBlob {
        try SyncKeyBlob(data: call(EnclaveCall.CreateSyncKey(role: role)).blob)
    }

    /// `plaintext` sealed as the record `context` under `parent`, signed by `identity`.
    public func sealSyncRecord(_ plaintext: SecretBytes, context: SyncRecordContext, parent: SyncKeyBlob, identity: SyncIdentityBlob) throws -> Data {
        try call(EnclaveCall.SealSyncRecord(identity: identity.data, parent: parent.data, context: context, plaintext: plaintext)).bytes
    }

    /// The plaintext of the record `context`, written by `writer` under `parent`.
    public func openSyncRecord(_ envelope: Data, context: SyncRecordContext, parent: SyncKeyBlob, writer: SyncDevicePublicKeys) throws -> SecretBytes {
        try call(EnclaveCall.OpenSyncRecord(
            envelope: envelope, parent: parent.data, context: context, writer: writer.device, writerKey: writer.signing.rawRepresentation)).plaintext
    }

    /// The class key `key` sealed as the class-key record `context` under the zone key `parent`.
    public func sealSyncKey(_ key: SyncKeyBlob, context: SyncRecordContext, parent: SyncKeyBlob, identity: SyncIdentityBlob) throws -> Data {
        try call(EnclaveCall.SealSyncKey(identity: identity.data, key: key.data, parent: parent.data, context: context)).bytes
    }

    /// The class key a class-key record holds, as a blob of this device.
    public func openSyncKey(_ envelope: Data, context: SyncRecordContext, parent: SyncKeyBlob, writer: SyncDevicePublicKeys) throws -> SyncKeyBlob {
        try SyncKeyBlob(data: call(EnclaveCall.OpenSyncKey(
            envelope: envelope, parent: parent.data, context: context, writer: writer.device, writerKey: writer.signing.rawRepresentation)).blob)
    }

    /// The zone key `key` shared with `recipient`: the share's bytes.
    public func sealSyncKeyShare(_ key: SyncKeyBlob, context: SyncRecordContext, to recipient: SyncDevicePublicKeys, identity: SyncIdentityBlob) throws -> Data {
        try call(EnclaveCall.SealSyncKeyShare(identity: identity.data, key: key.data, context: context, recipient: recipient)).bytes
    }

    /// The zone key a share to `identity` from `sender` holds, as a blob of this device.
    public func openSyncKeyShare(_ share: Data, context: SyncRecordContext, identity: SyncIdentityBlob, sender: SyncDevicePublicKeys) throws -> SyncKeyBlob {
        try SyncKeyBlob(data: call(EnclaveCall.OpenSyncKeyShare(
            identity: identity.data, share: share, context: context, sender: sender.device, senderKey: sender.signing.rawRepresentation)).blob)
    }
}
