public import FoundationEssentials
public import KeychainModel
public import KeychainStore
import SyncCrypto
import SyncEngine
public import SyncProtocol

/// The device's side of sync for one keychain and one zone: pulls what other devices wrote
/// and merges it in, then sends the queued local changes as one conditional batch (each
/// write names the version it replaces), pulling and merging again when another device
/// wrote first (docs/ARCHITECTURE.md, "Sync").
///
/// Nothing the server sends is applied unless it opens under its own context, decodes as an
/// item this device may take, and is newer than the version this device has seen; the local
/// item is changed only through ``KeychainStore/applySyncRecord(_:uuid:itemClass:mirror:pending:seen:history:)``,
/// in one transaction with its mirror row. An item the server's listing omits is never
/// deleted for that: only a deletion record deletes.
public final class KeychainSyncEngine: Sendable {
    let store: KeychainStore
    let sealer: any SyncRecordSealing
    let transport: any SyncZoneTransport
    /// This device's id: the writer of its stamps.
    public let device: SyncIdentifier
    public let zone: SyncIdentifier
    let log: @Sendable (String) -> Void
    /// This device's wall clock (a test's may be set back).
    let now: @Sendable () -> Date

    /// Rounds of pull-and-resend after a refused batch before giving up until the next sync.
    static let conflictRounds = 5

    /// How far ahead of this device's wall clock a received record may be stamped (Kerberos'
    /// default skew). A record stamped later waits, as a class A record while locked, until
    /// this clock reaches it: applied at once it would carry this device's clock, and every
    /// later write here, into its future, and win every merge until then — one writer with a
    /// wrong clock (or a member that lies) would rule the circle.
    public static let maximumClockSkew: TimeInterval = 300

    public init(
        store: KeychainStore, sealer: any SyncRecordSealing, transport: any SyncZoneTransport, device: SyncIdentifier, zone: SyncIdentifier,
        log: @escaping @Sendable (String) -> Void = { _ in }, now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.store = store
        self.sealer = sealer
        self.transport = transport
        self.device = device
        self.zone = zone
        self.log = log
        self.now = now
        try store.addSyncZone(zone.rawValue)
    }

    /// One round: pull, then send; after a refused batch, pull and send again.
    @discardableResult
    public func sync() async throws -> SyncReport {
        var report = SyncReport()
        try await pull(into: &report)
        for _ in 0..<Self.conflictRounds {
            do {
                try await push(into: &report)
                return report
            } catch let conflict as BatchConflict {
                log("sync: the server refused a batch (\(conflict.conflicts.count) records changed there first); pulling")
                try await pull(into: &report)
                // The server holds versions its feed has not given this device: it left them
                // out (or the device refused them). The whole feed is read again — records this
                // device has are passed over unopened — so an omission heals when the server
                // serves them, and is counted meanwhile.
                let omitted = try conflict.conflicts.filter { try (store.syncMirror($0.record.rawValue)?.version ?? 0) < $0.serverVersion }
                if !omitted.isEmpty {
                    report.omitted += omitted.count
                    log("sync: the server holds \(omitted.count) record version(s) its feed did not give this device; reading the whole feed again")
                    try await pull(into: &report, from: 0)
                }
            }
        }
        return report
    }

    // MARK: Pull

    /// Reads the feed after this device's cursor (or after `from`, to read it again) and
    /// takes each record; records that waited for an unlock go first.
    func pull(into report: inout SyncReport, from: Int64? = nil) async throws {
        // Records that waited for an unlock first (each still refused if older than the mirror).
        for waiting in try store.waitingSyncIncoming() where waiting.zone == zone.rawValue {
            guard let id = SyncIdentifier(waiting.record) else { continue }
            let record = SyncRecord(record: id, type: waiting.type, version: waiting.version, tombstone: waiting.tombstone, body: waiting.body)
            if let mirror = try store.syncMirror(waiting.record), mirror.version >= waiting.version {
                try store.removeSyncIncoming(waiting.record, version: waiting.version)  // a newer one was applied
                continue
            }
            if try take(record, into: &report) { try store.removeSyncIncoming(waiting.record, version: waiting.version) }
        }
        var cursor = try from ?? store.syncZones().first { $0.zone == zone.rawValue }?.cursor ?? 0
        // The feed position before the first record refused in this round: the stored cursor
        // stays there, so the next round reads that record again — a server that lied once
        // and then serves the real record is resumed without repair (a refused record's
        // version was never taken, so nothing is applied twice).
        var held: Int64?
        while true {
            let page = try await transport.changes(zone: zone, after: cursor, limit: SyncLimits.changesPage)
            for record in page.records {
                let refusedBefore = report.refused
                guard try !take(record, into: &report) else {
                    if report.refused > refusedBefore { held = min(held ?? .max, max(cursor, (record.seq ?? cursor + 1) - 1)) }
                    continue
                }
                try store.stashSyncIncoming(SyncMirrorRecord(
                    record: record.record.rawValue, zone: zone.rawValue, type: record.type, version: record.version, tombstone: record.tombstone,
                    body: record.body))
            }
            guard page.high > cursor else { break }
            cursor = page.high
            try store.advanceSyncCursor(zone: zone.rawValue, to: min(cursor, held ?? .max))
            if !page.more { break }
        }
    }

    /// Receives one record and counts what happened; false when it must wait (a class A item
    /// while locked, a record stamped ahead of this device's clock), true when it was
    /// applied, had nothing new, or was refused (logged: the server sent something this
    /// device will not take).
    func take(_ record: SyncRecord, into report: inout SyncReport) throws -> Bool {
        do {
            if try receive(record, into: &report) { report.received += 1 }
            return true
        } catch let error as KeychainError where error.status == OSStatusCode.interactionNotAllowed {
            report.waiting += 1
            return false
        } catch let ahead as StampedAhead {
            report.waiting += 1
            log("sync: record \(record.record) version \(record.version) waits: \(ahead)")
            return false
        } catch {
            report.refused += 1
            let reason = (error as? KeychainError)?.message ?? "\(error)"
            report.lastRefusal = "record \(record.record) version \(record.version): \(reason)"
            log("sync: refused record \(record.record) version \(record.version): \(reason)")
            return true
        }
    }

    /// Applies one received record; false when there was nothing to do (a version this
    /// device has, or a record type the engine does not read yet).
    func receive(_ record: SyncRecord, into report: inout SyncReport) throws -> Bool {
        guard record.type == SyncRecordType.item.rawValue else { return false }
        guard let uuid = UUID(uuidString: record.record.rawValue) else { throw KeychainError.decode("a record id that is not an item's") }
        let mirror = try store.syncMirror(record.record.rawValue)
        if let mirror {
            guard record.version >= mirror.version else { throw KeychainError.decode("a version lower than one this device has seen") }
            if record.version == mirror.version { return false }
        }
        let remote = try open(record.body, record: record.record, version: record.version, tombstone: record.tombstone)
        let bound = HybridLogicalClock.wall(now().addingTimeInterval(Self.maximumClockSkew))
        guard remote.latestClock <= bound else { throw StampedAhead(clock: remote.latestClock, bound: bound) }
        let base = try mirror.map { try open($0.body, record: record.record, version: $0.version, tombstone: $0.tombstone) }
        if let base, base.itemClass != remote.itemClass { throw KeychainError.decode("a record changed its item class") }
        let newMirror = SyncMirrorRecord(
            record: record.record.rawValue, zone: zone.rawValue, type: record.type, version: record.version, tombstone: record.tombstone, body: record.body)

        while true {
            let pending = try store.pendingSyncChange(record.record.rawValue)
            var merged = remote
            var history: [SyncHistoryEntry] = []
            if let pending {
                let local = ItemMerge.stamp(
                    try store.syncItem(uuid, of: remote.itemClass), of: remote.itemClass, against: base,
                    with: .init(clock: pending.clock, writer: device.rawValue))
                let outcome = ItemMerge.merge(base: base, local: local, remote: remote)
                merged = outcome.merged
                if let lost = outcome.lost, let stamp = lost.latestEdit ?? lost.deletion {
                    report.conflicts += 1
                    let body = try sealer.seal(
                        lost.encoded, context: context(record.record, version: record.version, tombstone: false),
                        protection: lost.protection ?? remote.protection ?? .afterFirstUnlock)
                    history.append(SyncHistoryEntry(record: record.record.rawValue, version: record.version, clock: stamp.clock, writer: stamp.writer, body: body))
                }
            }
            do {
                let outcome = try store.applySyncRecord(
                    merged.isDeleted ? nil : Self.item(merged), uuid: uuid, itemClass: remote.itemClass, mirror: newMirror,
                    pending: pending?.clock, seen: remote.latestClock, history: history)
                if case .lostCollision = outcome {
                    // Another item here holds its primary key with a lower uuid: this record
                    // goes, on every device.
                    try store.queueSyncDeletion(uuid, of: remote.itemClass)
                }
                return true
            } catch is SyncApplyConflict {
                continue  // a local write came in while merging: merge again with it
            }
        }
    }

    // MARK: Push

    /// Sends the whole queue, a batch of at most ``SyncLimits/batchWrites`` at a time.
    func push(into report: inout SyncReport) async throws {
        var after: HybridLogicalClock?
        while true {
            let changes = try store.pendingSyncChanges(after: after, limit: SyncLimits.batchWrites)
            guard let last = changes.last else { return }
            try await send(changes, into: &report)
            if changes.count < SyncLimits.batchWrites { return }
            after = last.clock
        }
    }

    /// Sends one batch: each change stamped against its mirror row and sealed.
    func send(_ changes: [SyncPendingChange], into report: inout SyncReport) async throws {
        var writes: [SyncRecord] = []
        var acknowledgements: [(mirror: SyncMirrorRecord, sent: HybridLogicalClock)] = []
        for change in changes {
            guard let uuid = UUID(uuidString: change.record), let record = SyncIdentifier(change.record) else {
                try store.dropSyncChange(change.record, sent: change.clock)
                continue
            }
            let mirror = try store.syncMirror(change.record)
            let payload: SyncItemPayload
            let base: SyncItemPayload?
            let body: Data
            let version = (mirror?.version ?? 0) + 1
            do {
                // The base, the item and the new record all need its class: class A waits
                // for the next unlock, and holds back nothing else.
                base = try mirror.map { try open($0.body, record: record, version: $0.version, tombstone: $0.tombstone) }
                let item = try store.syncItem(uuid, of: change.itemClass)
                payload = ItemMerge.stamp(item, of: change.itemClass, against: base, with: .init(clock: change.clock, writer: device.rawValue))
                if payload == base || (base == nil && payload.isDeleted) {
                    try store.dropSyncChange(change.record, sent: change.clock)  // nothing the server lacks
                    continue
                }
                body = try sealer.seal(
                    payload.encoded, context: context(record, version: version, tombstone: payload.isDeleted),
                    protection: payload.protection ?? base?.protection ?? .afterFirstUnlock)
            } catch let error as KeychainError where error.status == OSStatusCode.interactionNotAllowed {
                report.waiting += 1
                continue
            }
            writes.append(SyncRecord(record: record, type: SyncRecordType.item.rawValue, version: version, tombstone: payload.isDeleted, body: body))
            acknowledgements.append((
                SyncMirrorRecord(record: change.record, zone: zone.rawValue, type: SyncRecordType.item.rawValue, version: version, tombstone: payload.isDeleted, body: body),
                change.clock
            ))
        }
        guard !writes.isEmpty else { return }
        _ = try await transport.apply(writes, zone: zone)
        try store.acknowledgeSyncWrites(acknowledgements)
        report.sent += writes.count
    }

    /// The sealer, for a test that builds a second engine over the same keychain.
    public var sealerForTests: any SyncRecordSealing { sealer }

    // MARK: Records

    func context(_ record: SyncIdentifier, version: Int64, tombstone: Bool) -> SyncRecordContext {
        SyncRecordContext(zone: zone, record: record, version: version, type: .item, tombstone: tombstone)
    }

    /// Opens and decodes an item record, and checks its tombstone flag says what it holds.
    func open(_ body: Data, record: SyncIdentifier, version: Int64, tombstone: Bool) throws -> SyncItemPayload {
        let payload = try SyncItemPayload(decoding: sealer.open(body, context: context(record, version: version, tombstone: tombstone)))
        guard payload.isDeleted == tombstone else { throw KeychainError.decode("a record's tombstone flag does not match its item") }
        return payload
    }

    /// The item a merged payload describes (its uuid and sync flag are the store's to set).
    static func item(_ payload: SyncItemPayload) -> KeychainItem {
        KeychainItem(
            itemClass: payload.itemClass, attributes: payload.attributes, accessGroup: payload.accessGroup ?? "",
            protection: payload.protection ?? .afterFirstUnlock, synchronizable: true, tombstone: false,
            persistentReference: PersistentReference(itemClass: payload.itemClass, uuid: UUID()), data: payload.secret?.value)
    }
}

/// A received record stamped further ahead of this device's clock than
/// ``KeychainSyncEngine/maximumClockSkew``: it waits.
struct StampedAhead: Error, CustomStringConvertible {
    var clock: HybridLogicalClock
    var bound: HybridLogicalClock

    var description: String {
        "stamped \(Int((clock.date.timeIntervalSince(bound.date) + KeychainSyncEngine.maximumClockSkew).rounded())) s ahead of this device's clock (more than \(Int(KeychainSyncEngine.maximumClockSkew)) s)"
    }
}
