public import FoundationEssentials
import GRDB
import KeychainCallers
import KeychainCrypto
public import KeychainModel

/// A record as this keychain last saw the server acknowledge it: the merge base of the
/// next local change to it, as the server's body (opened only to merge).
public struct SyncMirrorRecord: Sendable, Equatable {
    public var record: String
    public var zone: String
    public var type: Int
    public var version: Int64
    public var tombstone: Bool
    public var body: Data

    public init(record: String, zone: String, type: Int, version: Int64, tombstone: Bool, body: Data) {
        self.record = record
        self.zone = zone
        self.type = type
        self.version = version
        self.tombstone = tombstone
        self.body = body
    }
}

/// A value that lost a merge, sealed like a record.
public struct SyncHistoryEntry: Sendable, Equatable {
    public var record: String
    /// The server version the merge was against.
    public var version: Int64
    /// The losing write's clock and device.
    public var clock: HybridLogicalClock
    public var writer: String
    public var recorded: Date
    public var body: Data

    public init(record: String, version: Int64, clock: HybridLogicalClock, writer: String, recorded: Date = Date(), body: Data) {
        self.record = record
        self.version = version
        self.clock = clock
        self.writer = writer
        self.recorded = recorded
        self.body = body
    }
}

/// What applying a received item did.
public enum SyncApplyOutcome: Sendable, Equatable {
    /// The item is here as received (or deleted, for a deletion).
    case applied
    /// Another live item here had the same primary key and a higher uuid: it was removed
    /// (and its deletion queued, when it synced) and the received item took its place.
    case replacedCollision(UUID)
    /// Another live item here had the same primary key and a lower uuid: it stays, and the
    /// received item was not stored — the engine queues its deletion.
    case lostCollision(UUID)
    /// An item here that never leaves the device (ThisDeviceOnly) has the same primary key:
    /// it stays, and the received item is not stored here (other devices keep it).
    case keptLocal(UUID)
}

/// The engine's side of the store: reading items by record, applying what the server sent,
/// and acknowledging what it took. None of these queue a change: the engine's own writes
/// are not local changes.
extension KeychainStore {
    /// The item whose uuid is `uuid`, secret included, if it is one sync carries (nil: there
    /// is none, or it became local or ThisDeviceOnly — for sync it is deleted). Throws what
    /// opening its secret throws (`errSecInteractionNotAllowed` for class A while locked).
    public func syncItem(_ uuid: UUID, of itemClass: ItemClass) throws -> KeychainItem? {
        let keys = OperationKeys(keybag)
        guard let stored = try read({ db in try liveRow(uuid, of: itemClass, in: db) }), Self.syncs(stored.identity) else { return nil }
        let associatedData = stored.identity.associatedData(for: .metadata)
        var item = try openMetadata(stored, keys: keys, associatedData: associatedData)
        (item.data, item.accessControl) = try openSecret(stored, associatedData: RowIdentity.associatedData(associatedData, as: .secret))
        return item
    }

    /// The mirror row of `record`.
    public func syncMirror(_ record: String) throws -> SyncMirrorRecord? {
        try read { db in
            try Row.fetchOne(statements.statement("SELECT record, zone, type, version, tombstone, body FROM sync_mirror WHERE record = ?", in: db), arguments: [record]).map {
                SyncMirrorRecord(record: $0["record"], zone: $0["zone"], type: $0["type"], version: $0["version"], tombstone: $0["tombstone"], body: $0["body"])
            }
        }
    }

    /// The zones sync uses and each one's feed cursor.
    public func syncZones() throws -> [(zone: String, cursor: Int64)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT zone, cursor FROM sync_zones ORDER BY zone").map { (zone: $0["zone"], cursor: $0["cursor"]) }
        }
    }

    /// Adds a zone (cursor 0), or leaves it as it is.
    public func addSyncZone(_ zone: String) throws {
        try write { db in try db.execute(sql: "INSERT INTO sync_zones (zone, cursor) VALUES (?, 0) ON CONFLICT DO NOTHING", arguments: [zone]) }
    }

    /// Moves a zone's cursor forward (never back).
    ///
    /// - Parameter view: record versions given in the page just read, kept (as
    ///   ``recordSyncView(zone:_:)`` keeps them) in the same transaction.
    public func advanceSyncCursor(zone: String, to cursor: Int64, view: [SyncViewRow] = []) throws {
        try write { db in
            try recordSyncView(zone: zone, view, in: db)
            try db.execute(sql: "UPDATE sync_zones SET cursor = max(cursor, ?) WHERE zone = ?", arguments: [cursor, zone])
        }
    }

    /// Applies a received record in one transaction: the item as merged (nil: deleted), the
    /// mirror row, the losing values, and the account's clock moved past `seen`.
    ///
    /// - Parameter pending: the clock of the queued local change the merge included (nil:
    ///   none). When the queue holds another by now — a local write came in between —
    ///   nothing is applied: it throws ``SyncApplyConflict`` and the engine merges again.
    public func applySyncRecord(
        _ item: KeychainItem?, uuid: UUID, itemClass: ItemClass, mirror: SyncMirrorRecord, pending: HybridLogicalClock?,
        seen: HybridLogicalClock, history: [SyncHistoryEntry] = []
    ) throws -> SyncApplyOutcome {
        let keys = OperationKeys(keybag)
        let sealed = try item.map { item in
            var item = item
            item.persistentReference = PersistentReference(itemClass: itemClass, uuid: uuid)
            item.synchronizable = true
            item.tombstone = false
            return try seal(item, keys: keys)
        }
        return try write { db in
            let queued = try Int64.fetchOne(statements.statement("SELECT clock FROM sync_outgoing WHERE record = ?", in: db), arguments: [mirror.record])
            guard queued == pending?.rawValue else { throw SyncApplyConflict() }
            let outcome = try applyReceived(sealed, uuid: uuid, itemClass: itemClass, in: db)
            // Whatever became of the item, the record was seen: its mirror row, the values
            // that lost the merge, and the clock moved past the record's.
            try recordMirror(mirror, in: db)
            for entry in history {
                try db.execute(
                    sql: "INSERT INTO sync_history (record, version, clock, writer, recorded, body) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [entry.record, entry.version, entry.clock.rawValue, entry.writer, entry.recorded.timeIntervalSinceReferenceDate, entry.body])
            }
            try statements.statement("UPDATE sync_account SET clock = max(clock, ?)", in: db).execute(arguments: [seen.rawValue])
            return outcome
        }
    }

    /// The item side of ``applySyncRecord(_:uuid:itemClass:mirror:pending:seen:history:)``.
    private func applyReceived(_ sealed: SealedRow?, uuid: UUID, itemClass: ItemClass, in db: Database) throws -> SyncApplyOutcome {
        var outcome = SyncApplyOutcome.applied
        let existing = try liveRow(uuid, of: itemClass, in: db)
        if let existing, !Self.syncs(existing.identity) {
            // The item was made local or ThisDeviceOnly here: it is not overwritten, and
            // its queued deletion removes it from the other devices.
            return .keptLocal(uuid)
        }
        if let sealed {
            if let holder = try Row.fetchOne(
                statements.statement("SELECT \(StoredRow.columns) FROM \(itemClass.rawValue) WHERE pk = ? AND tomb = 0", in: db),
                arguments: [sealed.identity.primaryKeyToken]
            ).map({ try StoredRow($0, itemClass: itemClass) }), holder.identity.uuid != uuid {
                // An item that never leaves this device (ThisDeviceOnly) keeps its place:
                // the received one is not stored here, and stays on the other devices.
                guard Self.syncs(holder.identity) else {
                    if let existing { try deleteRow(existing.rowID, of: itemClass, in: db) }
                    return .keptLocal(holder.identity.uuid)
                }
                // Two items with one primary key: the lower uuid wins, on every device.
                if holder.identity.uuid.uuidString.lowercased() < uuid.uuidString.lowercased() {
                    // An earlier version of the received item kept here goes too.
                    if let existing { try deleteRow(existing.rowID, of: itemClass, in: db) }
                    return .lostCollision(holder.identity.uuid)
                }
                try deleteRow(holder.rowID, of: itemClass, in: db)
                if Self.syncs(holder.identity) { try journal(.tombstone, uuid: holder.identity.uuid, of: itemClass, at: Date(), in: db) }
                outcome = .replacedCollision(holder.identity.uuid)
            }
            try claimPrimaryKey(sealed.identity.primaryKeyToken, of: itemClass, excluding: existing?.rowID, in: db)
            if let existing {
                try replace(rowID: existing.rowID, with: sealed, in: db)
            } else {
                try insert(sealed, in: db)
            }
        } else if let existing {
            try deleteRow(existing.rowID, of: itemClass, in: db)
        }
        return outcome
    }

    /// Records what the server acknowledged: each write's mirror row, and its queued change
    /// removed unless a newer one replaced it meanwhile (that one is sent next).
    public func acknowledgeSyncWrites(_ writes: [(mirror: SyncMirrorRecord, sent: HybridLogicalClock)]) throws {
        try write { db in
            for (mirror, sent) in writes {
                try recordMirror(mirror, in: db)
                try statements.statement("DELETE FROM sync_outgoing WHERE record = ? AND clock = ?", in: db).execute(arguments: [mirror.record, sent.rawValue])
            }
        }
    }

    /// Drops a queued change there is nothing to send for (an item deleted before the server
    /// ever had it), unless a newer one replaced it meanwhile.
    public func dropSyncChange(_ record: String, sent: HybridLogicalClock) throws {
        try write { db in try db.execute(sql: "DELETE FROM sync_outgoing WHERE record = ? AND clock = ?", arguments: [record, sent.rawValue]) }
    }

    /// Queues the deletion of a record this keychain does not keep (a received item that
    /// lost a primary-key collision here): every device then deletes it.
    public func queueSyncDeletion(_ uuid: UUID, of itemClass: ItemClass) throws {
        try write { db in try journal(.tombstone, uuid: uuid, of: itemClass, at: Date(), in: db) }
    }

    /// Counts a send that was not acknowledged.
    public func countSyncAttempt(_ record: String) throws {
        try write { db in try db.execute(sql: "UPDATE sync_outgoing SET attempts = attempts + 1 WHERE record = ?", arguments: [record]) }
    }

    /// Keeps a received record that cannot be applied yet (class A while locked) until the
    /// next sync after an unlock; a newer version of it replaces an older one.
    public func stashSyncIncoming(_ record: SyncMirrorRecord) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO sync_incoming (record, zone, type, version, tombstone, seq, body) VALUES (?, ?, ?, ?, ?, 0, ?)
                    ON CONFLICT (record) DO UPDATE SET zone = excluded.zone, type = excluded.type, version = excluded.version,
                      tombstone = excluded.tombstone, body = excluded.body WHERE excluded.version > sync_incoming.version
                    """,
                arguments: [record.record, record.zone, record.type, record.version, record.tombstone, record.body])
        }
    }

    /// The received records waiting to be applied.
    public func waitingSyncIncoming() throws -> [SyncMirrorRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT record, zone, type, version, tombstone, body FROM sync_incoming ORDER BY record").map {
                SyncMirrorRecord(record: $0["record"], zone: $0["zone"], type: $0["type"], version: $0["version"], tombstone: $0["tombstone"], body: $0["body"])
            }
        }
    }

    /// Forgets a waiting record once applied or refused (unless a newer version replaced it).
    public func removeSyncIncoming(_ record: String, version: Int64) throws {
        try write { db in try db.execute(sql: "DELETE FROM sync_incoming WHERE record = ? AND version = ?", arguments: [record, version]) }
    }

    /// The history of `record`, oldest first.
    public func syncHistory(_ record: String) throws -> [SyncHistoryEntry] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT record, version, clock, writer, recorded, body FROM sync_history WHERE record = ? ORDER BY id", arguments: [record]).map {
                SyncHistoryEntry(
                    record: $0["record"], version: $0["version"], clock: HybridLogicalClock(rawValue: $0["clock"]), writer: $0["writer"],
                    recorded: Date(timeIntervalSinceReferenceDate: $0["recorded"]), body: $0["body"])
            }
        }
    }

    private func recordMirror(_ mirror: SyncMirrorRecord, in db: Database) throws {
        try statements.statement(
            """
            INSERT INTO sync_mirror (record, zone, type, version, tombstone, body) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (record) DO UPDATE SET zone = excluded.zone, type = excluded.type, version = excluded.version,
              tombstone = excluded.tombstone, body = excluded.body
            """, in: db
        ).execute(arguments: [mirror.record, mirror.zone, mirror.type, mirror.version, mirror.tombstone, mirror.body])
    }

    private func liveRow(_ uuid: UUID, of itemClass: ItemClass, in db: Database) throws -> StoredRow? {
        try Row.fetchOne(
            statements.statement("SELECT \(StoredRow.columns) FROM \(itemClass.rawValue) WHERE uuid = ? AND tomb = 0", in: db), arguments: [uuid.storedBytes]
        ).map { try StoredRow($0, itemClass: itemClass) }
    }
}

/// A local change to the record came in while the engine merged it: merge again.
public struct SyncApplyConflict: Error, Sendable {}
