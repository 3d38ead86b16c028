public import FoundationEssentials
import GRDB
import KeychainModel

/// One record version as the server gave it to this device (migration v6's `sync_view`).
public struct SyncViewRow: Sendable, Equatable {
    public var record: String
    public var version: Int64
    public var seq: Int64
    public var hash: Data

    public init(record: String, version: Int64, seq: Int64, hash: Data) {
        self.record = record
        self.version = version
        self.seq = seq
        self.hash = hash
    }
}

/// A device's latest head in a zone, as received (or, for this device, as published).
public struct SyncHeadRow: Sendable, Equatable {
    public var zone: String
    public var device: String
    /// The head record's version: the head's counter.
    public var version: Int64
    public var seq: Int64
    public var root: Data
    public var chainLength: Int64
    public var chainHead: Data
    /// The writer's wall clock when it wrote the head (seconds since 1970).
    public var written: Int64
    /// Whether this device rebuilt its own view at `seq` and found the same root.
    public var agreed: Bool
    public var received: Date

    public init(
        zone: String, device: String, version: Int64, seq: Int64, root: Data, chainLength: Int64, chainHead: Data, written: Int64, agreed: Bool,
        received: Date = Date()
    ) {
        self.zone = zone
        self.device = device
        self.version = version
        self.seq = seq
        self.root = root
        self.chainLength = chainLength
        self.chainHead = chainHead
        self.written = written
        self.agreed = agreed
        self.received = received
    }
}

/// A zone stopped: a head that disagreed with this device's view.
public struct SyncAlarm: Sendable, Equatable {
    public var zone: String
    /// The device whose head disagreed, and that head's counter: the zone syncs again once
    /// a head of that device at least as new agrees.
    public var device: String
    public var version: Int64
    /// The feed position it named.
    public var seq: Int64
    /// What disagreed, in plain words (no value).
    public var reason: String
    public var raised: Date

    public init(zone: String, device: String, version: Int64, seq: Int64, reason: String, raised: Date = Date()) {
        self.zone = zone
        self.device = device
        self.version = version
        self.seq = seq
        self.reason = reason
        self.raised = raised
    }
}

/// Signed heads' side of the store (docs/ARCHITECTURE.md, "Signed heads").
extension KeychainStore {
    /// Keeps record versions as the server gave them. A version older than one kept is not
    /// kept (a replay); the same version given again with the same body keeps its first
    /// position, and with another body replaces it (a server that lied once and then tells
    /// the truth is believed for the truth, and the heads judge it).
    public func recordSyncView(zone: String, _ rows: [SyncViewRow]) throws {
        guard !rows.isEmpty else { return }
        try write { db in try recordSyncView(zone: zone, rows, in: db) }
    }

    func recordSyncView(zone: String, _ rows: [SyncViewRow], in db: Database) throws {
        guard !rows.isEmpty else { return }
        let statement = try statements.statement(
            """
            INSERT INTO sync_view (zone, record, version, seq, hash) SELECT ?1, ?2, ?3, ?4, ?5
            WHERE NOT EXISTS (SELECT 1 FROM sync_view WHERE zone = ?1 AND record = ?2 AND version > ?3)
            ON CONFLICT (zone, record, version) DO UPDATE SET seq = excluded.seq, hash = excluded.hash WHERE excluded.hash != sync_view.hash
            """, in: db)
        for row in rows { try statement.execute(arguments: [zone, row.record, row.version, row.seq, row.hash]) }
    }

    /// Every record version kept for `zone`, by record (bytewise) and version, one at a time
    /// (a view of 10,000 records is not held in memory to be hashed).
    public func forEachSyncViewRow(zone: String, _ body: (SyncViewRow) throws -> Void) throws {
        try read { db in
            let rows = try Row.fetchCursor(
                statements.statement("SELECT record, version, seq, hash FROM sync_view WHERE zone = ? ORDER BY record, version", in: db), arguments: [zone])
            while let row = try rows.next() {
                try body(SyncViewRow(record: row[0], version: row[1], seq: row[2], hash: row[3]))
            }
        }
    }

    /// The latest feed position of a record version kept for `zone` (0: none).
    public func highestSyncViewPosition(zone: String) throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM sync_view WHERE zone = ?", arguments: [zone]) ?? 0 }
    }

    /// Each device's latest head in `zone`, by device.
    public func syncHeads(zone: String) throws -> [String: SyncHeadRow] {
        try read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT zone, device, version, seq, root, chain_length, chain_head, written, agreed, received FROM sync_heads WHERE zone = ?",
                arguments: [zone])
            return Dictionary(uniqueKeysWithValues: rows.map { row in
                let head = SyncHeadRow(
                    zone: row["zone"], device: row["device"], version: row["version"], seq: row["seq"], root: row["root"],
                    chainLength: row["chain_length"], chainHead: row["chain_head"], written: row["written"], agreed: row["agreed"],
                    received: Date(timeIntervalSinceReferenceDate: row["received"]))
                return (head.device, head)
            })
        }
    }

    /// Keeps a device's head, unless one with a higher counter is kept already.
    public func saveSyncHead(_ head: SyncHeadRow) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO sync_heads (zone, device, version, seq, root, chain_length, chain_head, written, agreed, received)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (zone, device) DO UPDATE SET version = excluded.version, seq = excluded.seq, root = excluded.root,
                      chain_length = excluded.chain_length, chain_head = excluded.chain_head, written = excluded.written,
                      agreed = excluded.agreed, received = excluded.received
                    WHERE excluded.version >= sync_heads.version
                    """,
                arguments: [
                    head.zone, head.device, head.version, head.seq, head.root, head.chainLength, head.chainHead, head.written, head.agreed,
                    head.received.timeIntervalSinceReferenceDate,
                ])
        }
    }

    /// The alarm that stopped `zone`, if one did.
    public func syncAlarm(zone: String) throws -> SyncAlarm? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT zone, device, version, seq, reason, raised FROM sync_alarms WHERE zone = ?", arguments: [zone]).map {
                SyncAlarm(
                    zone: $0["zone"], device: $0["device"], version: $0["version"], seq: $0["seq"], reason: $0["reason"],
                    raised: Date(timeIntervalSinceReferenceDate: $0["raised"]))
            }
        }
    }

    /// Stops a zone (the first alarm's time is kept while it stays raised).
    public func raiseSyncAlarm(_ alarm: SyncAlarm) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO sync_alarms (zone, device, version, seq, reason, raised) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (zone) DO UPDATE SET device = excluded.device, version = excluded.version, seq = excluded.seq,
                      reason = excluded.reason
                    """,
                arguments: [alarm.zone, alarm.device, alarm.version, alarm.seq, alarm.reason, alarm.raised.timeIntervalSinceReferenceDate])
        }
    }

    /// Lets a zone sync again: the device whose head disagreed has a head, as new or newer,
    /// that agrees.
    public func clearSyncAlarm(zone: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM sync_alarms WHERE zone = ?", arguments: [zone]) }
    }
}
