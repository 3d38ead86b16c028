import Enclave
import EnclaveProtocol
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainSync
import SyncCrypto
import SyncProtocol

/// The sync keys a round uses: every key this device holds, by id, and the current class keys.
/// A round that receives a rotation (a share, class keys, a pointer) changes them as it goes,
/// so what it sends after the pointer is sealed under the new keys.
final class SyncKeyring: Sendable {
    struct State {
        var keys: [SyncIdentifier: SyncKeyBlob]
        var zoneKey: SyncIdentifier
        var classA: SyncIdentifier
        var classC: SyncIdentifier
    }
    let state: BlockingMutex<State>

    init(keys: [SyncIdentifier: SyncKeyBlob], zoneKey: SyncIdentifier, classA: SyncIdentifier, classC: SyncIdentifier) {
        state = BlockingMutex(State(keys: keys, zoneKey: zoneKey, classA: classA, classC: classC))
    }

    subscript(id: SyncIdentifier) -> SyncKeyBlob? { state.withLock { $0.keys[id] } }

    var current: (zone: SyncKeyBlob?, classA: SyncKeyBlob?, classC: SyncKeyBlob?) {
        state.withLock { ($0.keys[$0.zoneKey], $0.keys[$0.classA], $0.keys[$0.classC]) }
    }

    func add(_ key: SyncKeyBlob) { state.withLock { $0.keys[key.keyID] = key } }

    func makeCurrent(zoneKey: SyncIdentifier, classA: SyncIdentifier, classC: SyncIdentifier) {
        state.withLock {
            $0.zoneKey = zoneKey
            $0.classA = classA
            $0.classC = classC
        }
    }
}

/// The engine's sealer in securityd: item records sealed and opened by the enclave under the
/// zone's class keys, signed by this device's identity and checked against the writer's key
/// as the pinned membership chain lists it. securityd passes blobs; no key leaves the enclave.
/// It also takes the zone's key records as the feed brings them (``receiveKey(_:zone:)``).
struct EnclaveSyncSealer: SyncRecordSealing {
    let enclave: EnclaveClient
    let store: KeychainStore
    let device: SyncIdentifier
    let identity: SyncIdentityBlob
    let keyring: SyncKeyring
    /// The circle's current members.
    let members: [SyncIdentifier: SyncDevicePublicKeys]
    /// Devices the chain removed: what they wrote before is still opened from this device's
    /// own mirror and history (the engine refuses their records in the feed before opening
    /// them); no key record of theirs is taken.
    let formerMembers: [SyncIdentifier: SyncDevicePublicKeys]
    /// The chain's length, and the signer of each removal by its index: a key pointer is taken
    /// only right after a removal its writer signed, in a chain this device has.
    let chainLength: Int64
    let removalSigners: [Int64: SyncIdentifier]

    init(
        enclave: EnclaveClient, store: KeychainStore, device: SyncIdentifier, identity: SyncIdentityBlob, keyring: SyncKeyring, membership: MembershipState
    ) {
        self.enclave = enclave
        self.store = store
        self.device = device
        self.identity = identity
        self.keyring = keyring
        self.members = membership.members
        self.formerMembers = membership.removed.mapValues(\.keys)
        self.chainLength = membership.pin.length
        self.removalSigners = Dictionary(membership.removed.values.map { ($0.index, $0.signer) }) { first, _ in first }
    }

    func seal(_ plaintext: SecretBytes, context: SyncRecordContext, protection: ProtectionClass) throws -> Data {
        let current = keyring.current
        let key: SyncKeyBlob?
        switch protection {
        case .whenUnlocked: key = current.classA
        case .afterFirstUnlock, .always: key = current.classC
        default: throw KeychainError.param("a ThisDeviceOnly item has no sync key")
        }
        guard let key else { throw KeychainError(status: OSStatusCode.internalComponent, message: "the zone's class key is missing") }
        return try enclave.sealSyncRecord(plaintext, context: context, parent: key, identity: identity)
    }

    func open(_ body: Data, context: SyncRecordContext) throws -> SecretBytes {
        let envelope = try Self.envelope(body)
        guard let key = keyring[envelope.parentKey], key.role != .zone else { throw KeychainError.decode("a record under a key this device does not hold") }
        guard let writer = members[envelope.writer] ?? formerMembers[envelope.writer] else {
            throw KeychainError.decode("a record written by a device that is not a member")
        }
        return try enclave.openSyncRecord(body, context: context, parent: key, writer: writer)
    }

    /// Takes a key record: this device's share of a zone key, a class key under a zone key held
    /// here, or the pointer to the current keys (newer than the one they came from, naming keys
    /// held here, written by a member). Each is kept in the store as it comes; a pointer makes
    /// its keys current. A class A key while locked, or a pointer naming one not yet opened,
    /// waits (`errSecInteractionNotAllowed`) for the next unlock.
    func receiveKey(_ record: SyncRecord, zone: SyncIdentifier) throws -> Bool {
        let context = SyncRecordContext(zone: zone, record: record.record, version: record.version, type: SyncRecordType(rawValue: record.type) ?? .item)
        switch SyncRecordType(rawValue: record.type) {
        case .keyShare:
            guard record.record == (try SyncService.shareRecord(for: device)), !record.tombstone else { return false }  // another device's
            let share: SyncKeyShare
            do { share = try SyncKeyShare(decoding: record.body) } catch { throw KeychainError.decode(error.description) }
            guard keyring[share.keyID] == nil else { return false }
            guard let sender = members[share.sender] else { throw KeychainError.decode("a key share from a device that is not a member") }
            let key = try enclave.openSyncKeyShare(record.body, context: context, identity: identity, sender: sender)
            try keep(key, zone: zone)
            return true
        case .classKey:
            guard keyring[record.record] == nil else { return false }  // held (sealed again under a newer zone key)
            let envelope = try Self.envelope(record.body)
            guard let parent = keyring[envelope.parentKey], parent.role == .zone else {
                throw KeychainError.decode("a class key under a zone key this device does not hold")
            }
            guard let writer = members[envelope.writer] else { throw KeychainError.decode("a class key written by a device that is not a member") }
            let key = try enclave.openSyncKey(record.body, context: context, parent: parent, writer: writer)
            try keep(key, zone: zone)
            return true
        case .keyPointer:
            guard record.record == SyncKeyPointer.recordID, !record.tombstone else { throw KeychainError.decode("a key pointer in another record's place") }
            guard let stored = try store.syncKeyPointer(zone.rawValue) else { return false }
            guard record.version > stored.version else {
                if record.version == stored.version { return false }
                throw KeychainError.decode("a key pointer older than the one this device follows (replayed)")
            }
            let writer = try Self.envelope(record.body).writer
            guard members[writer] != nil else { throw KeychainError.decode("a key pointer written by a device that is not a member") }
            let pointer: SyncKeyPointer
            do { pointer = try SyncKeyPointer(decoding: try open(record.body, context: context)) } catch let error as SyncCryptoError {
                throw KeychainError.decode(error.description)
            }
            guard pointer.zone == zone else { throw KeychainError.decode("a key pointer for another zone") }
            guard pointer.epoch >= stored.epoch else { throw KeychainError.decode("a key pointer older than the keys this device follows") }
            // Keys made after a removal this device has not been given: taken on the word of
            // a member whose removal, perhaps, the server hides — it could be the removed one.
            // They wait for the chain, and the engine sends nothing meanwhile.
            guard pointer.epoch <= chainLength else {
                throw KeychainError(
                    status: OSStatusCode.interactionNotAllowed, message: "the zone's new keys follow device-list entries this device has not been given")
            }
            guard removalSigners[pointer.epoch - 1] == writer else {
                throw KeychainError.decode("a key pointer that follows no removal by its writer")
            }
            guard let zoneKey = keyring[pointer.zoneKey], zoneKey.role == .zone, keyring[pointer.classC]?.role == .classC else {
                throw KeychainError.decode("a key pointer names keys this device was not given")
            }
            guard keyring[pointer.classA]?.role == .classA else {
                throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the key pointer waits for class A's new key (the next unlock)")
            }
            let keys = SyncZoneKeys(zone: zone.rawValue, zoneKey: pointer.zoneKey.rawValue, classA: pointer.classA.rawValue, classC: pointer.classC.rawValue)
            guard try store.adoptSyncKeys([], pointer: SyncKeyPointerRow(keys: keys, version: record.version, epoch: pointer.epoch)) else { return false }
            keyring.makeCurrent(zoneKey: pointer.zoneKey, classA: pointer.classA, classC: pointer.classC)
            return true
        default:
            return false
        }
    }

    private func keep(_ key: SyncKeyBlob, zone: SyncIdentifier) throws {
        try store.saveSyncKeys([SyncKeyRow(key: key.keyID.rawValue, zone: zone.rawValue, role: Int(key.role.rawValue), blob: key.data)])
        keyring.add(key)
    }

    static func envelope(_ body: Data) throws -> SyncRecordEnvelope {
        do {
            return try SyncRecordEnvelope(decoding: body)
        } catch {
            throw KeychainError.decode(error.description)
        }
    }
}
