import Enclave
import EnclaveProtocol
import FoundationEssentials
import KeychainModel
import KeychainSync
import SyncCrypto
import SyncProtocol

/// The engine's sealer in securityd: item records sealed and opened by the enclave under the
/// zone's class keys, signed by this device's identity and checked against the writer's key
/// as the pinned membership chain lists it. securityd passes blobs; no key leaves the enclave.
struct EnclaveSyncSealer: SyncRecordSealing {
    let enclave: EnclaveClient
    let identity: SyncIdentityBlob
    /// Every class key this device holds, by id (the current ones and older ones).
    let keys: [SyncIdentifier: SyncKeyBlob]
    let classA: SyncIdentifier
    let classC: SyncIdentifier
    /// The circle's current members.
    let members: [SyncIdentifier: SyncDevicePublicKeys]

    func seal(_ plaintext: SecretBytes, context: SyncRecordContext, protection: ProtectionClass) throws -> Data {
        let parent: SyncIdentifier
        switch protection {
        case .whenUnlocked: parent = classA
        case .afterFirstUnlock, .always: parent = classC
        default: throw KeychainError.param("a ThisDeviceOnly item has no sync key")
        }
        guard let key = keys[parent] else { throw KeychainError(status: OSStatusCode.internalComponent, message: "the zone's class key is missing") }
        return try enclave.sealSyncRecord(plaintext, context: context, parent: key, identity: identity)
    }

    func open(_ body: Data, context: SyncRecordContext) throws -> SecretBytes {
        let envelope: SyncRecordEnvelope
        do {
            envelope = try SyncRecordEnvelope(decoding: body)
        } catch {
            throw KeychainError.decode(error.description)
        }
        guard let key = keys[envelope.parentKey], key.role != .zone else { throw KeychainError.decode("a record under a key this device does not hold") }
        guard let writer = members[envelope.writer] else { throw KeychainError.decode("a record written by a device that is not a member") }
        return try enclave.openSyncRecord(body, context: context, parent: key, writer: writer)
    }
}
