public import FoundationEssentials
import KeychainModel
public import KeychainStore
public import Logging
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
    /// Where the engine tells what it did: refused records and a stopped zone are warnings.
    let log: @Sendable (Logger.Level, String) -> Void
    /// This device's wall clock (a test's may be set back).
    let now: @Sendable () -> Date
    /// The membership chain as this device verified it: each entry's SHA-256, so the chain's
    /// head at every length. Empty: heads are neither written nor read (an engine test's
    /// circle, which has no chain).
    let chain: [Data]
    /// Devices the chain removed: their records are refused without holding the feed (they
    /// will never open), their heads passed over.
    let removed: Set<SyncIdentifier>
    /// The index of the chain's newest removal, if any: keys made before it (a pointer's
    /// epoch at or below it) may be held by the removed device, so nothing is sealed under
    /// them for the server (``sendHold()``).
    let newestRemoval: Int64?
    /// Versions of records this round refused (they did not open, or their writer was
    /// removed), by record: a write of this device goes over them rather than wait for ever
    /// behind a version nobody honest can read (``send(_:head:into:)``).
    let refusedVersions = BlockingMutex([String: Int64]())

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
        log: @escaping @Sendable (Logger.Level, String) -> Void = { _, _ in }, now: @escaping @Sendable () -> Date = { Date() }, chain: [Data] = [],
        removed: Set<SyncIdentifier> = [], newestRemoval: Int64? = nil
    ) throws {
        self.store = store
        self.sealer = sealer
        self.transport = transport
        self.device = device
        self.zone = zone
        self.log = log
        self.now = now
        self.chain = chain
        self.removed = removed
        self.newestRemoval = newestRemoval
        try store.addSyncZone(zone.rawValue)
    }

    /// One round: pull, then send (with this device's head, when `publishingHead` and what it
    /// was given changed); after a refused batch, pull and send again.
    ///
    /// - Throws: ``SyncHeadDisagreement`` (as `errSecDecode`) when another device's signed
    ///   head disagrees with what the server gave this device: the zone stops, nothing of the
    ///   page that carried it is applied, nothing is sent, until the feed agrees again.
    @discardableResult
    public func sync(publishingHead: Bool = true) async throws -> SyncReport {
        var report = SyncReport()
        // Held since an earlier round: the rotation's records may lie behind the cursor (a
        // server that withheld them moved it past), so the whole feed is read again — records
        // this device has are passed over unopened.
        try await pull(into: &report, from: try sendHold() == nil ? nil : 0)
        for _ in 0..<Self.conflictRounds {
            // A change of the zone's keys this device cannot take yet (locked, or following
            // device-list entries it has not been given): nothing is sent under the old keys,
            // which a removed device may hold.
            if try store.waitingSyncIncoming().contains(where: { $0.zone == zone.rawValue && $0.type == SyncRecordType.keyPointer.rawValue }) {
                log(.info, "sync: a change of the zone's keys waits; nothing is sent until it is taken")
                return report
            }
            // The chain removed a device after the current keys were made: the server has not
            // given this device the rotation (or it has not happened yet), and the removed
            // device holds these keys. Nothing is sealed under them for the server.
            if let hold = try sendHold() {
                report.held = hold
                log(.warning, "sync: \(hold); nothing is sent until keys made after it are taken")
                return report
            }
            do {
                try await push(into: &report, head: publishingHead ? try headToPublish() : nil)
                return report
            } catch let conflict as BatchConflict {
                log(.info, "sync: the server refused a batch (\(conflict.conflicts.count) records changed there first); pulling")
                try await pull(into: &report)
                // The server holds versions its feed has not given this device: it left them
                // out (or the device refused them). The whole feed is read again — records this
                // device has are passed over unopened — so an omission heals when the server
                // serves them, and is counted meanwhile.
                let heads = try store.syncHeads(zone: zone.rawValue)
                let omitted = try conflict.conflicts.filter {
                    let seen = $0.record == headRecord ? heads[device.rawValue]?.version : try store.syncMirror($0.record.rawValue)?.version
                    return seen ?? 0 < $0.serverVersion
                }
                if !omitted.isEmpty {
                    report.omitted += omitted.count
                    log(.warning, "sync: the server holds \(omitted.count) record version(s) its feed did not give this device; reading the whole feed again")
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
        if !chain.isEmpty, let alarm = try store.syncAlarm(zone: zone.rawValue) { try await verify(after: alarm, into: &report) }
        try takeWaiting(into: &report)
        let keysBefore = report.keys
        var cursor = try from ?? store.syncZones().first { $0.zone == zone.rawValue }?.cursor ?? 0
        // The feed position before the first record refused in this round: the stored cursor
        // stays there, so the next round reads that record again — a server that lied once
        // and then serves the real record is resumed without repair (a refused record's
        // version was never taken, so nothing is applied twice).
        var held: Int64?
        while true {
            let page = try await transport.changes(zone: zone, after: cursor, limit: SyncLimits.changesPage)
            // What the page gave is kept in the view with the cursor's move (one transaction);
            // a page that carries a head keeps it first, since heads are checked against the
            // view, with this page in it, before anything of the page is applied.
            var view = chain.isEmpty ? [] : page.records.filter { $0.type != SyncRecordType.head.rawValue }.map {
                SyncViewRow(record: $0.record.rawValue, version: $0.version, seq: $0.seq ?? cursor, hash: SyncHead.bodyHash($0.body))
            }
            // The page's key records first: a head or an item sealed under a key the same page
            // brings (a rotation's) opens. A key changes no item, and only a member's opens.
            try takeEach(page.records.filter { Self.isKey($0) }, after: cursor, held: &held, into: &report)
            if !chain.isEmpty, page.records.contains(where: { $0.type == SyncRecordType.head.rawValue }) {
                try store.recordSyncView(zone: zone.rawValue, view)
                view = []
                for record in page.records where record.type == SyncRecordType.head.rawValue && removedWriter(record) == nil {
                    let refusedBefore = report.refused
                    try check(head: record, into: &report)
                    if report.refused > refusedBefore { held = min(held ?? .max, max(cursor, (record.seq ?? cursor + 1) - 1)) }
                }
            }
            try takeEach(page.records.filter { $0.type != SyncRecordType.head.rawValue && !Self.isKey($0) }, after: cursor, held: &held, into: &report)
            guard page.high > cursor else {
                try store.recordSyncView(zone: zone.rawValue, view)
                break
            }
            cursor = page.high
            try store.advanceSyncCursor(zone: zone.rawValue, to: min(cursor, held ?? .max), view: view)
            if !page.more { break }
        }
        // Records that waited for a key this pull brought (a rotation's class A key, say).
        if report.keys > keysBefore { try takeWaiting(into: &report) }
    }

    /// Takes records of a page in order: one written by a removed device is refused for good
    /// (the feed is not held for it: it will never open); one refused otherwise holds the
    /// stored cursor before it (`held`); one that must wait is kept in `sync_incoming`.
    func takeEach(_ records: [SyncRecord], after cursor: Int64, held: inout Int64?, into report: inout SyncReport) throws {
        for record in records {
            if let writer = removedWriter(record) {
                report.refused += 1
                report.lastRefusal = "record \(record.record) version \(record.version): written by device \(writer), which was removed"
                noteRefused(record)
                log(.warning, "sync: refused record \(record.record) version \(record.version): its writer was removed from the circle")
                continue
            }
            let refusedBefore = report.refused
            guard try !take(record, into: &report) else {
                if report.refused > refusedBefore { held = min(held ?? .max, max(cursor, (record.seq ?? cursor + 1) - 1)) }
                continue
            }
            try store.stashSyncIncoming(SyncMirrorRecord(
                record: record.record.rawValue, zone: zone.rawValue, type: record.type, version: record.version, tombstone: record.tombstone,
                body: record.body))
        }
    }

    /// Why nothing may be sent now, or nil: the current keys were made before the chain's
    /// newest removal (the pointer's epoch is the chain's length when its keys were made).
    public func sendHold() throws -> String? {
        guard let newestRemoval else { return nil }
        let epoch = try store.syncKeyPointer(zone.rawValue)?.epoch ?? 0
        guard epoch <= newestRemoval else { return nil }
        return "the zone's keys predate the removal at device-list entry \(newestRemoval)"
    }

    /// A record of the zone's keys: a share, a class key, the key pointer.
    static func isKey(_ record: SyncRecord) -> Bool {
        [SyncRecordType.keyShare.rawValue, SyncRecordType.classKey.rawValue, SyncRecordType.keyPointer.rawValue].contains(record.type)
    }

    /// Takes the records that waited (for an unlock, a key, this device's clock); each is
    /// still refused if older than the mirror.
    func takeWaiting(into report: inout SyncReport) throws {
        for waiting in try store.waitingSyncIncoming() where waiting.zone == zone.rawValue {
            guard let id = SyncIdentifier(waiting.record) else { continue }
            let record = SyncRecord(record: id, type: waiting.type, version: waiting.version, tombstone: waiting.tombstone, body: waiting.body)
            if removedWriter(record) != nil {
                try store.removeSyncIncoming(waiting.record, version: waiting.version)  // its writer was removed since
                continue
            }
            if let mirror = try store.syncMirror(waiting.record), mirror.version >= waiting.version {
                try store.removeSyncIncoming(waiting.record, version: waiting.version)  // a newer one was applied
                continue
            }
            if try take(record, into: &report) { try store.removeSyncIncoming(waiting.record, version: waiting.version) }
        }
    }

    /// The writer a record names (a share's sender) when the chain removed it. The name is
    /// not checked here (the record is refused either way, and a server that puts a removed
    /// device's name on another's record has left that record out, which heads show).
    func removedWriter(_ record: SyncRecord) -> SyncIdentifier? {
        guard !removed.isEmpty else { return nil }
        let writer =
            record.type == SyncRecordType.keyShare.rawValue
            ? try? SyncKeyShare(decoding: record.body).sender : try? SyncRecordEnvelope(decoding: record.body).writer
        guard let writer, removed.contains(writer) else { return nil }
        return writer
    }

    /// A stopped zone's round: the whole feed read again, its records kept in the view and
    /// its heads compared, nothing applied. The zone syncs again only when the device whose
    /// head disagreed has one as new, or newer, that agrees: a server that gives what it left
    /// out is forgiven; one that merely stops showing that head, or forked with writes on both
    /// sides, is not.
    func verify(after alarm: SyncAlarm, into report: inout SyncReport) async throws {
        var cursor: Int64 = 0
        var cleared = false
        while true {
            let page = try await transport.changes(zone: zone, after: cursor, limit: SyncLimits.changesPage)
            try store.recordSyncView(
                zone: zone.rawValue,
                page.records.filter { $0.type != SyncRecordType.head.rawValue }.map {
                    SyncViewRow(record: $0.record.rawValue, version: $0.version, seq: $0.seq ?? cursor, hash: SyncHead.bodyHash($0.body))
                })
            // Keys as a round takes them (they change no item): a head under a new key opens.
            for record in page.records where Self.isKey(record) { _ = try take(record, into: &report) }
            for record in page.records where record.type == SyncRecordType.head.rawValue && removedWriter(record) == nil {
                if let agreed = try check(head: record, into: &report), agreed.device.rawValue == alarm.device, record.version >= alarm.version {
                    cleared = true
                }
            }
            guard page.high > cursor, page.more else { break }
            cursor = page.high
        }
        guard cleared else { throw SyncHeadDisagreement(alarm: alarm) }
        try store.clearSyncAlarm(zone: zone.rawValue)
        log(.info, "sync: device \(alarm.device)'s head agrees with this device's view again; zone \(zone) resumes")
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
            log(.info, "sync: record \(record.record) version \(record.version) waits: \(ahead)")
            return false
        } catch {
            report.refused += 1
            let reason = (error as? KeychainError)?.message ?? "\(error)"
            report.lastRefusal = "record \(record.record) version \(record.version): \(reason)"
            log(.warning, "sync: refused record \(record.record) version \(record.version): \(reason)")
            noteRefused(record)
            return true
        }
    }

    /// Keeps the version of an item record this device refused: its own next write of that
    /// record goes over it. A version it refused is one it cannot read — garbage from a stolen
    /// credential, a removed writer's, a lying server's — so writing over it loses nothing
    /// this device could have merged; a server that serves garbage in place of a real
    /// version could as well have withheld it.
    func noteRefused(_ record: SyncRecord) {
        guard record.type == SyncRecordType.item.rawValue else { return }
        refusedVersions.withLock { $0[record.record.rawValue] = max($0[record.record.rawValue] ?? 0, record.version) }
    }

    /// Applies one received record; false when there was nothing to do (a version this
    /// device has, or a record type the engine does not read yet).
    func receive(_ record: SyncRecord, into report: inout SyncReport) throws -> Bool {
        switch SyncRecordType(rawValue: record.type) {
        case .item: break
        case .keyShare, .classKey, .keyPointer:
            if try sealer.receiveKey(record, zone: zone) { report.keys += 1 }
            return false
        default: return false
        }
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

    /// Sends the whole queue, a batch of at most ``SyncLimits/batchWrites`` at a time; this
    /// device's head, when it has a new one, goes with the first.
    func push(into report: inout SyncReport, head: PublishedHead? = nil) async throws {
        var after: HybridLogicalClock?
        var head = head
        while true {
            let limit = SyncLimits.batchWrites - (head == nil ? 0 : 1)
            let changes = try store.pendingSyncChanges(after: after, limit: limit)
            guard !changes.isEmpty || head != nil else { return }
            try await send(changes, head: head, into: &report)
            head = nil
            guard let last = changes.last, changes.count == limit else { return }
            after = last.clock
        }
    }

    /// Sends one batch: each change stamped against its mirror row and sealed (and the head).
    func send(_ changes: [SyncPendingChange], head: PublishedHead? = nil, into report: inout SyncReport) async throws {
        var writes: [SyncRecord] = head.map { [$0.record] } ?? []
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
            // Over a version refused in this round (the server holds it, nobody honest reads
            // it), else after the mirror's.
            let refused = refusedVersions.withLock { $0[change.record] } ?? 0
            let version = max(mirror?.version ?? 0, refused) + 1
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
        let positions = try await transport.apply(writes, zone: zone)
        if let highest = positions.max() { report.acknowledged = max(report.acknowledged ?? 0, highest) }
        try store.acknowledgeSyncWrites(acknowledgements)
        if let head {
            try store.saveSyncHead(head.row)
            report.headsSent += 1
        }
        report.sent += acknowledgements.count
    }

    // MARK: Heads

    /// The record this device's head is written to.
    var headRecord: SyncIdentifier { SyncHead.recordID(of: device) }

    /// The chain's length and head as this device verified it.
    var membershipPin: MembershipPin? { chain.last.map { MembershipPin(length: Int64(chain.count), head: $0) } }

    /// A head to send, sealed, and the row to keep once the server took it.
    struct PublishedHead {
        var record: SyncRecord
        var row: SyncHeadRow
    }

    /// This device's head at its cursor, when what it was given (or its chain) changed since
    /// the head it last published; nil otherwise, while the zone is stopped, or when its view
    /// at the cursor cannot be rebuilt (a refused record held the cursor behind a gap).
    func headToPublish() throws -> PublishedHead? {
        guard let pin = membershipPin, try store.syncAlarm(zone: zone.rawValue) == nil else { return nil }
        let cursor = try store.syncZones().first { $0.zone == zone.rawValue }?.cursor ?? 0
        let last = try store.syncHeads(zone: zone.rawValue)[device.rawValue]
        // No record version given at a position past the last head's, and the same chain: the
        // same head, without hashing the view. (Whether this round read anything does not
        // say: the rounds a change or a hint started read records and wrote no head.)
        if let last, last.chainLength == pin.length, last.chainHead == pin.head, try store.highestSyncViewPosition(zone: zone.rawValue) <= last.seq {
            return nil
        }
        guard cursor > 0, let root = try root(at: cursor) else { return nil }
        if let last, last.root == root, last.chainLength == pin.length, last.chainHead == pin.head { return nil }
        let written = Int64(now().timeIntervalSince1970)
        let head = SyncHead(device: device, zone: zone, seq: cursor, root: root, membership: pin, written: written)
        let version = (last?.version ?? 0) + 1
        let body = try sealer.seal(
            head.encoded, context: SyncRecordContext(zone: zone, record: headRecord, version: version, type: .head), protection: .afterFirstUnlock)
        return PublishedHead(
            record: SyncRecord(record: headRecord, type: SyncRecordType.head.rawValue, version: version, body: body),
            row: SyncHeadRow(
                zone: zone.rawValue, device: device.rawValue, version: version, seq: cursor, root: root, chainLength: pin.length, chainHead: pin.head,
                written: written, agreed: true))
    }

    /// Reads a head from the feed: opened and checked as any record (a member's signature,
    /// under this zone's key, at its place), refused when older than one seen; then compared
    /// with this device's view at the position it names. A disagreement stops the zone.
    /// Answers the head when it was compared and agreed.
    @discardableResult
    func check(head record: SyncRecord, into report: inout SyncReport) throws -> SyncHead? {
        let head: SyncHead
        let kept = try store.syncHeads(zone: zone.rawValue)
        do {
            let plaintext = try sealer.open(record.body, context: SyncRecordContext(zone: zone, record: record.record, version: record.version, type: .head))
            do { head = try SyncHead(decoding: plaintext) } catch { throw KeychainError.decode(error.description) }
            // The envelope's writer signed it (the sealer checked): it must be the device the
            // head speaks for, at that device's place.
            let writer = try? SyncRecordEnvelope(decoding: record.body).writer
            guard head.zone == zone, head.device == writer, SyncHead.recordID(of: head.device) == record.record, !record.tombstone else {
                throw KeychainError.decode("a head in another device's or zone's place")
            }
            if let known = kept[head.device.rawValue] {
                guard record.version >= known.version else { throw KeychainError.decode("a head older than one this device has seen (replayed)") }
                // Seen and agreed: nothing new — unless the zone stopped, when it is compared again.
                if record.version == known.version, known.agreed, known.root == head.root, known.seq == head.seq,
                    try store.syncAlarm(zone: zone.rawValue) == nil
                {
                    return nil
                }
            }
        } catch {
            report.refused += 1
            let reason = (error as? KeychainError)?.message ?? "\(error)"
            report.lastRefusal = "head \(record.record) version \(record.version): \(reason)"
            log(.warning, "sync: refused head \(record.record) version \(record.version): \(reason)")
            return nil
        }
        var disagreement: String?
        var agreed = false
        if head.membership.length <= Int64(chain.count) {
            if chain[Int(head.membership.length) - 1] != head.membership.head {
                disagreement = "its device list differs from this device's at entry \(head.membership.length - 1)"
            }
        }
        if disagreement == nil, let root = try root(at: head.seq) {
            if root == head.root {
                agreed = true
            } else {
                disagreement = "the records it was given up to feed position \(head.seq) differ from what the server gave this device"
            }
        }
        if let disagreement {
            let alarm = SyncAlarm(zone: zone.rawValue, device: head.device.rawValue, version: record.version, seq: head.seq, reason: disagreement)
            try store.raiseSyncAlarm(alarm)
            log(.warning, "sync: device \(head.device)'s signed head disagrees with this device's view of zone \(zone): \(disagreement); the zone stops")
            throw SyncHeadDisagreement(alarm: alarm)
        }
        try store.saveSyncHead(SyncHeadRow(
            zone: zone.rawValue, device: head.device.rawValue, version: record.version, seq: head.seq, root: head.root,
            chainLength: head.membership.length, chainHead: head.membership.head, written: head.written, agreed: agreed))
        if agreed { report.headsAgreed += 1 }
        return agreed ? head : nil
    }

    /// The root of what this device had been given at feed position `seq`: every record's
    /// version with the latest position at or before it — or nil, when that is not known (a
    /// record was given at a version more than one past the one held there: a version in
    /// between, given to nobody here, may have been current at `seq`).
    func root(at seq: Int64) throws -> Data? {
        var root = SyncHead.Root()
        var known = true
        var record: String?
        var held: SyncViewRow?  // the current record's latest version at or before `seq`
        var next: SyncViewRow?  // its first version after `seq`, past `held`
        func finishRecord() {
            if let next, next.version != (held?.version ?? 0) + 1 { known = false }
            if let held { root.add(record: held.record, version: held.version, hash: held.hash) }
        }
        try store.forEachSyncViewRow(zone: zone.rawValue) { row in
            guard known else { return }
            if row.record != record {
                if record != nil { finishRecord() }
                record = row.record
                held = nil
                next = nil
            }
            // Rows come by version: the held one is the last at or before `seq`.
            if row.seq <= seq {
                held = row
                next = nil
            } else if next == nil {
                next = row
            }
        }
        if record != nil { finishRecord() }
        return known ? root.finish() : nil
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

/// Another device's signed head disagreed with this device's view: the zone stopped.
public struct SyncHeadDisagreement: Error, CustomStringConvertible {
    public var alarm: SyncAlarm

    public var description: String {
        "device \(alarm.device)'s signed head disagrees with what the server gave this device (\(alarm.reason)): the server may be lying; zone \(alarm.zone) stops until they agree"
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
