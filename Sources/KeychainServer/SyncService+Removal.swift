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

// Removing a device (docs/ARCHITECTURE.md, "Removing a device"; issue 33 point 4): the
// removal in the chain first, so every member refuses what the device writes from then on;
// its credential revoked, so an honest server stops serving it; then new keys — a zone key,
// class keys for A and C — with every class key held sealed again under the new zone key
// (members and devices that join later still open the records written before), the zone key
// shared to each remaining member, and the pointer that makes them current; last, the records
// the removed device wrote last, sealed again by this device under the new keys. A removed
// device that keeps its keys, served by a server that ignores the revocation, opens nothing
// written after: no record after the pointer is under a key it holds.
extension SyncService {
    /// Removes `text` (a device id) from the circle and rotates the zone's keys. Run again
    /// after a failure part way, it finishes: a device the chain removed whose removal the
    /// keys do not yet follow gets the rotation.
    func removeDevice(_ text: String) throws -> SyncDeviceRemoved {
        guard let target = SyncIdentifier(text) else { throw KeychainError.param("not a device id: `security sync status` lists them") }
        return try rounds.withLock { _ in
            // What the removed device wrote that this device has not yet been given (to seal
            // again), and any other member's rotation (its keys go into the new one). A round
            // that fails (a stopped zone) does not stop a removal.
            _ = try? round(publishingHead: false)
            guard let stored = try circle() else { throw Self.off }
            var circle = try refreshMembership(stored)
            guard target != circle.device else {
                throw KeychainError.param("a device cannot remove itself: remove it from another device of the circle, or turn sync off here")
            }
            let client = circle.client
            let removal: MembershipRemoval
            if let keys = circle.membership.members[target] {
                // The credential first: the device cannot act on the server between its
                // removal and its revocation (the server does not read the chain, so any
                // device of the account may revoke any other's credential).
                try revoke(target, client)
                var membership = circle.membership
                let entry = try enclave.signMembershipRecord(membership.unsigned(.remove(target), signer: circle.device), as: circle.identity)
                try Self.refusing { try membership.append(entry) }
                try Self.blocking { try await client.appendMembership(MembershipEntry(index: entry.index, entry: entry.encoded)) }
                try store.appendSyncMembership([entry.encoded], from: Int(entry.index))
                circle.membership = membership
                circle.sealer = EnclaveSyncSealer(
                    enclave: enclave, store: store, device: circle.device, identity: circle.identity, keyring: circle.sealer.keyring,
                    membership: membership)
                removal = MembershipRemoval(keys: keys, index: entry.index, signer: circle.device)
                DaemonLog.logger.notice("sync: removed device \(target) from the circle")
            } else if let earlier = circle.membership.removed[target] {
                try revoke(target, client)
                removal = earlier  // run again: what did not finish is finished
            } else {
                throw KeychainError(status: OSStatusCode.itemNotFound, message: "no device \(target) in this circle")
            }
            // Keys made after the removal (by this run, or one before it, or another member's
            // rotation since) already shut the device out; otherwise they change now.
            let current = try store.syncKeyPointer(circle.zone.rawValue)
            let classKeys =
                try (current?.epoch ?? 0) > removal.index
                ? [current?.keys.classA, current?.keys.classC].compactMap { $0.flatMap(SyncIdentifier.init) } : rotateKeys(circle)
            let resealed = try reseal(writtenBy: target, keys: removal.keys, circle)
            DaemonLog.logger.info("sync: the zone's keys changed; \(resealed) record(s) of device \(target) sealed again")
            return SyncDeviceRemoved(
                device: target.rawValue, members: circle.membership.members.keys.map(\.rawValue).sorted(), classKeys: classKeys.map(\.rawValue),
                resealed: UInt32(clamping: resealed))
        }
    }

    /// Revokes `device`'s credential; one the server no longer has is revoked already.
    func revoke(_ device: SyncIdentifier, _ client: SyncServerClient) throws {
        do {
            try Self.blocking { try await client.revokeDevice(device) }
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            // A removal run again.
        }
    }

    /// Makes the zone's new keys and writes, in one batch, every class key held sealed under
    /// the new zone key, a share of it to each other member, and the pointer (sealed under the
    /// new class C key); then keeps them and makes them current here. The new class keys' ids.
    private func rotateKeys(_ circle: Circle) throws -> [SyncIdentifier] {
        let zone = circle.zone
        let zoneKey = try enclave.createSyncKey(role: .zone)
        let classA = try enclave.createSyncKey(role: .classA)
        let classC = try enclave.createSyncKey(role: .classC)
        let held = circle.sealer.keyring.state.withLock { $0.keys.values.filter { $0.role != .zone } }
        let classKeys = (held + [classA, classC]).sorted { $0.keyID.rawValue < $1.keyID.rawValue }
        let others = circle.membership.members.filter { $0.key != circle.device }.sorted { $0.key.rawValue < $1.key.rawValue }
        let stored = try store.syncKeyPointer(zone.rawValue)
        let pointer = SyncKeyPointer(zone: zone, zoneKey: zoneKey.keyID, classA: classA.keyID, classC: classC.keyID, epoch: circle.membership.pin.length)
        // The versions the server holds: as this device was given them, or as a refused batch
        // says (then everything is sealed again at the right version: versions are in the AEAD).
        var known: [SyncIdentifier: Int64] = [:]
        func version(_ record: SyncIdentifier) throws -> Int64 {
            try (known[record] ?? store.syncViewVersion(zone: zone.rawValue, record: record.rawValue) ?? 0) + 1
        }
        // Kept before they are sent (not yet current): if the batch's answer is lost after the
        // server took it, this device still opens its own pointer when the feed brings it.
        let rows = [zoneKey, classA, classC].map { SyncKeyRow(key: $0.keyID.rawValue, zone: zone.rawValue, role: Int($0.role.rawValue), blob: $0.data) }
        try store.saveSyncKeys(rows)
        for key in [zoneKey, classA, classC] { circle.sealer.keyring.add(key) }
        var written = false
        var pointerVersion: Int64 = 0
        for _ in 0..<3 where !written {
            // Shares first, then the class keys under the zone key they carry, then the pointer:
            // a member reading the feed in order holds each key before what it opens.
            var writes: [SyncRecord] = []
            for (member, keys) in others {
                let record = try Self.shareRecord(for: member)
                let context = SyncRecordContext(zone: zone, record: record, version: try version(record), type: .keyShare)
                writes.append(SyncRecord(
                    record: record, type: SyncRecordType.keyShare.rawValue, version: context.version,
                    body: try enclave.sealSyncKeyShare(zoneKey, context: context, to: keys, identity: circle.identity)))
            }
            for key in classKeys {
                let context = SyncRecordContext(zone: zone, record: key.keyID, version: try version(key.keyID), type: .classKey)
                writes.append(SyncRecord(
                    record: key.keyID, type: SyncRecordType.classKey.rawValue, version: context.version,
                    body: try enclave.sealSyncKey(key, context: context, parent: zoneKey, identity: circle.identity)))
            }
            pointerVersion = max(try version(SyncKeyPointer.recordID), (stored?.version ?? 0) + 1)
            let context = SyncRecordContext(zone: zone, record: SyncKeyPointer.recordID, version: pointerVersion, type: .keyPointer)
            writes.append(SyncRecord(
                record: SyncKeyPointer.recordID, type: SyncRecordType.keyPointer.rawValue, version: pointerVersion,
                body: try enclave.sealSyncRecord(pointer.encoded, context: context, parent: classC, identity: circle.identity)))
            do {
                let (client, batch) = (circle.client, writes)
                _ = try Self.blocking { try await client.apply(batch, zone: zone) }
                written = true
            } catch let conflict as BatchConflict {
                // Another member changed the keys meanwhile: its keys are not in this batch, and
                // a pointer over them would leave them under a zone key nobody shares. The next
                // run reads its rotation first.
                if conflict.conflicts.contains(where: { $0.record == SyncKeyPointer.recordID }) {
                    _ = try? round(publishingHead: false)
                    throw KeychainError(
                        status: OSStatusCode.duplicateItem, message: "another device changed the circle's keys at the same time: run remove-device again")
                }
                for failed in conflict.conflicts { known[failed.record] = failed.serverVersion }
            }
        }
        guard written else { throw KeychainError(status: OSStatusCode.io, message: "the server kept refusing the new keys: try again") }
        let keys = SyncZoneKeys(zone: zone.rawValue, zoneKey: zoneKey.keyID.rawValue, classA: classA.keyID.rawValue, classC: classC.keyID.rawValue)
        try store.adoptSyncKeys(rows, pointer: SyncKeyPointerRow(keys: keys, version: pointerVersion, epoch: pointer.epoch))
        for key in [zoneKey, classA, classC] { circle.sealer.keyring.add(key) }
        circle.sealer.keyring.makeCurrent(zoneKey: zoneKey.keyID, classA: classA.keyID, classC: classC.keyID)
        return [classA.keyID, classC.keyID]
    }

    /// Seals again, under the current keys and signed by this device, each item record whose
    /// latest version (as the mirror holds it) `removed` wrote: members refuse that device's
    /// records from now on. The plaintext is unchanged (its stamps still name the writer of
    /// each field); a record another device wrote meanwhile is left to that write.
    private func reseal(writtenBy removed: SyncIdentifier, keys: SyncDevicePublicKeys, _ circle: Circle) throws -> Int {
        let zone = circle.zone
        let rows = try store.syncMirrorRows(zone: zone.rawValue).filter {
            $0.type == SyncRecordType.item.rawValue && (try? SyncRecordEnvelope(decoding: $0.body).writer) == removed
        }
        var resealed = 0
        for start in stride(from: 0, to: rows.count, by: SyncLimits.batchWrites) {
            var batch: [(write: SyncRecord, mirror: SyncMirrorRecord)] = []
            for row in rows[start..<min(start + SyncLimits.batchWrites, rows.count)] {
                guard let record = SyncIdentifier(row.record) else { continue }
                let envelope = try EnclaveSyncSealer.envelope(row.body)
                guard let parent = circle.sealer.keyring[envelope.parentKey] else { continue }  // never opened here
                let old = SyncRecordContext(zone: zone, record: record, version: row.version, type: .item, tombstone: row.tombstone)
                let plaintext = try enclave.openSyncRecord(row.body, context: old, parent: parent, writer: keys)
                var context = old
                context.version += 1
                let body = try circle.sealer.seal(plaintext, context: context, protection: parent.role == .classA ? .whenUnlocked : .afterFirstUnlock)
                let write = SyncRecord(record: record, type: row.type, version: context.version, tombstone: row.tombstone, body: body)
                batch.append((write, SyncMirrorRecord(
                    record: row.record, zone: row.zone, type: row.type, version: context.version, tombstone: row.tombstone, body: body)))
            }
            while !batch.isEmpty {
                do {
                    let client = circle.client
                    let writes = batch.map(\.write)
                    _ = try Self.blocking { try await client.apply(writes, zone: zone) }
                    // No queued change is acknowledged (none was sent): clock 0 matches none.
                    try store.acknowledgeSyncWrites(batch.map { ($0.mirror, HybridLogicalClock(rawValue: 0)) })
                    resealed += batch.count
                    break
                } catch let conflict as BatchConflict {
                    // Written meanwhile by another device: that version is not the removed one's.
                    let failed = Set(conflict.conflicts.map(\.record))
                    batch.removeAll { failed.contains($0.write.record) }
                }
            }
        }
        return resealed
    }
}
