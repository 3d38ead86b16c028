import Enclave
import EnclaveProtocol
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainProtocol
import KeychainStore
import KeychainSync
import KeychainSystem
import SyncCrypto
import SyncProtocol

// The recovery key (docs/ARCHITECTURE.md, "The recovery key"; issue 33 point 5): a member of
// the circle whose identity 32 base32 characters derive. `recovery-key create` adds it as a
// device is added — an `add` entry signed by this device, its credential registered, the zone
// key shared to it — and prints the key once; rotations share to it as to any member. When
// every device is lost, `recover` on a new device derives the identity from the key, signs
// in as it, verifies the chain from its genesis, adds a new identity of this device signed by
// the recovery member, opens the zone's keys through the recovery member's share, and syncs.
extension SyncService {
    /// Adds a recovery key to the circle; the key, once.
    ///
    /// - Throws: `errSecDuplicateItem` when the circle has one (remove it first to replace it).
    func createRecoveryKey() throws -> SyncRecoveryKey {
        try rounds.withLock { _ in
            _ = try? round(publishingHead: false)  // the current zone key, as for a join
            guard let stored = try circle() else { throw Self.off }
            let circle = try refreshMembership(stored)
            if let existing = circle.membership.members.keys.first(where: SyncRecovery.isRecovery) {
                throw KeychainError(
                    status: OSStatusCode.duplicateItem,
                    message: "this circle has a recovery key (\(existing)): `security sync remove-device \(existing)` first to replace it")
            }
            guard let zoneKey = circle.zoneKey else { throw KeychainError(status: OSStatusCode.internalComponent, message: "the zone key is missing") }
            let (key, recovery) = try enclave.createSyncRecoveryIdentity()
            let member = recovery.publicKeys.device
            let credential = try enclave.syncCredential(identity: recovery).withUnsafeBytes { Data($0) }
            var membership = circle.membership
            let added = try enclave.signMembershipRecord(membership.unsigned(.add(recovery.publicKeys), signer: circle.device), as: circle.identity)
            try Self.refusing { try membership.append(added) }
            let context = SyncRecordContext(zone: circle.zone, record: try Self.shareRecord(for: member), version: 1, type: .keyShare)
            let share = try enclave.sealSyncKeyShare(zoneKey, context: context, to: recovery.publicKeys, identity: circle.identity)
            let attestation = try enclave.signMembershipRecord(SyncRecovery.attestation(of: added, member: recovery.publicKeys), as: recovery)
            guard let attestationRecord = SyncRecovery.attestationRecord(of: member) else { throw KeychainError.decode("a recovery member id too long") }
            let client = circle.client
            // As a join: the credential, the share and the attestation first, then the chain's entry.
            try Self.blocking {
                try await client.registerDevice(member, token: credential)
                _ = try await client.apply(
                    [
                        SyncRecord(record: context.record, type: SyncRecordType.keyShare.rawValue, version: 1, body: share),
                        SyncRecord(record: attestationRecord, type: SyncRecordType.attestation.rawValue, version: 1, body: attestation.encoded),
                    ], zone: circle.zone)
                try await client.appendMembership(MembershipEntry(index: added.index, entry: added.encoded))
            }
            try store.appendSyncMembership([added.encoded], from: Int(added.index))
            DaemonLog.logger.notice("sync: the circle has a recovery key (\(member))")
            return SyncRecoveryKey(key: SyncRecovery.grouped(key), device: member.rawValue)
        }
    }

    /// Joins, as a new device, the circle on `server` whose recovery key is `key`.
    func recover(server: String, key: SecretBytes) throws -> SyncStatusReport {
        guard enabledHere else { throw KeychainError(status: OSStatusCode.unimplemented, message: "the System keychain does not sync") }
        let url = try SyncServerClient.checkedURL(server)
        guard try store.syncAccount() == nil else { throw Self.alreadyOn }
        let recovery = try enclave.importSyncRecoveryIdentity(key)
        let member = recovery.publicKeys.device
        let asRecovery = try SyncServerClient(server: url.absoluteString, credential: try enclave.syncCredential(identity: recovery), http: agent)
        let (entries, records): ([MembershipEntry], [SyncRecord])
        do {
            (entries, records) = try Self.blocking { (try await asRecovery.membership(after: -1), try await Self.keyRecords(asRecovery)) }
        } catch let error as KeychainError where error.status == OSStatusCode.authFailed {
            throw KeychainError(status: OSStatusCode.authFailed, message: "the server knows no circle with this recovery key (or it was removed)")
        }
        // No pin to check against: the chain is verified from its genesis, must hold the key's
        // member with exactly the keys the key derives, and must be the chain the member itself
        // signed an attestation of when it was added (SyncRecovery.attestation).
        var chain = try Self.membership(entries.map(\.entry))
        guard chain.members[member] == recovery.publicKeys else {
            throw KeychainError.decode("the circle's chain does not hold this recovery key's member")
        }
        guard let attestation = records.last(where: { $0.type == SyncRecordType.attestation.rawValue && $0.record == SyncRecovery.attestationRecord(of: member) })
        else { throw KeychainError.decode("the server holds no attestation of this recovery key") }
        try Self.refusing {
            try SyncRecovery.check(attestation: attestation.body, of: recovery.publicKeys, in: try entries.map { try MembershipRecord(decoding: $0.entry) })
        }
        let keys = try openKeys(records, chain: chain, identity: recovery, device: member)
        let device = SyncIdentifier.random()
        let identity = try enclave.createSyncIdentity(device: device)
        let credential = try enclave.syncCredential(identity: identity).withUnsafeBytes { Data($0) }
        let added = try enclave.signMembershipRecord(chain.unsigned(.add(identity.publicKeys), signer: member), as: recovery)
        try Self.refusing { try chain.append(added) }
        try Self.blocking {
            try await asRecovery.registerDevice(device, token: credential)
            try await asRecovery.appendMembership(MembershipEntry(index: added.index, entry: added.encoded))
        }
        try rounds.withLock { _ in
            guard try store.syncAccount() == nil else { throw Self.alreadyOn }
            try store.enableSync(
                SyncAccountRecord(server: url.absoluteString, account: chain.account.rawValue, device: device.rawValue, identity: identity.data),
                circle: keys.rows(membership: entries.map(\.entry) + [added.encoded]))
        }
        DaemonLog.logger.notice("sync: recovered a circle of \(chain.members.count) members as device \(device)")
        _ = try? syncNow()
        startHints()
        return try status()
    }
}
