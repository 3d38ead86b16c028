import Foundation
import Logging
import PostgresKit
import SQLKit
import SQLiteKit
import SyncProtocol

/// ``SyncStore`` in SQL, one text for SQLite and PostgreSQL through SQLKit. The dialects differ
/// in a few places only: how a transaction begins (`BEGIN IMMEDIATE` on SQLite, which admits
/// one writer; on PostgreSQL, where other server instances write too, a batch locks its zone
/// row by the upsert that takes it, and a membership append its account row with `FOR
/// UPDATE`), the name of the bytes type (``SyncSchema``), the advisory locks around
/// migrations and nameplate allocation, and how hints leave (`NOTIFY`, or in process).
///
/// One connection per store, one transaction at a time on it (``TransactionQueue``).
/// Durability: SQLite in WAL with `synchronous=FULL` (an acknowledged write survives power
/// loss); PostgreSQL with its default `synchronous_commit=on`.
public final class SQLSyncStore: SyncStore {
    public enum Dialect: Sendable, Equatable {
        case sqlite, postgres
    }

    public let dialect: Dialect
    public let hints: ChangeHints
    private let database: any SQLDatabase
    private let queue = TransactionQueue()
    private let closeConnection: @Sendable () async throws -> Void

    private init(dialect: Dialect, database: any SQLDatabase, hints: ChangeHints = ChangeHints(), close: @escaping @Sendable () async throws -> Void) {
        self.dialect = dialect
        self.database = database
        self.hints = hints
        self.closeConnection = close
    }

    /// Opens (creating if needed) the SQLite database at `path` and brings its schema up to date.
    public static func sqlite(path: String, logger: Logger) async throws -> SQLSyncStore {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        // No statement logging: a log would carry the binds.
        let database = connection.sql(queryLogLevel: nil)
        do {
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000"] {
                try await database.raw("\(unsafeRaw: pragma)").run()
            }
            let store = SQLSyncStore(dialect: .sqlite, database: database) { try await connection.close() }
            try await store.migrate()
            return store
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Connects to PostgreSQL at `url` (`postgres://user:password@host:port/database` or
    /// `postgres+uds://user@localhost/path/to/socket#database`) and brings the schema up to date.
    public static func postgres(url: String, logger: Logger) async throws -> SQLSyncStore {
        let configuration = try SQLPostgresConfiguration(url: url)
        let connection = try await PostgresConnection.connect(configuration: configuration.coreConfiguration, id: 1, logger: logger)
        let database = connection.sql(queryLogLevel: nil)
        let hints = ChangeHints()
        var listener: PostgresHintListener?
        do {
            let started = try await PostgresHintListener.start(configuration: configuration.coreConfiguration, hints: hints, logger: logger)
            listener = started
            let store = SQLSyncStore(dialect: .postgres, database: database, hints: hints) {
                await started.close()
                try await connection.close()
            }
            try await store.migrate()
            return store
        } catch {
            await listener?.close()
            try? await connection.close()
            throw error
        }
    }

    public func close() async throws {
        hints.finishAll()
        try await queue.run { try await self.closeConnection() }
    }

    /// Tells the account's sockets, on every instance, that `hint` happened. On PostgreSQL
    /// the NOTIFY is part of the transaction and reaches listeners when it commits; on
    /// SQLite, where this instance is the only writer, the caller publishes after commit.
    private func notify(_ hint: ChangeHint, account: SyncIdentifier, in db: any SQLDatabase) async throws {
        guard dialect == .postgres else { return }
        try await db.raw("SELECT pg_notify(\(bind: ChangeHints.channel), \(bind: ChangeHints.payload(hint, account: account)))").run()
    }

    private func published(_ hint: ChangeHint, account: SyncIdentifier) {
        if dialect == .sqlite { hints.publish(hint, account: account) }
    }

    // MARK: Transactions and schema

    /// Runs `body` in a transaction of its own, rolled back if it throws.
    func transaction<T: Sendable>(_ body: @Sendable @escaping (any SQLDatabase) async throws -> T) async throws -> T {
        let database = self.database
        let begin = dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await queue.run {
            try await database.raw("\(unsafeRaw: begin)").run()
            do {
                let result = try await body(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Reads outside a write transaction, still one at a time on the connection.
    func read<T: Sendable>(_ body: @Sendable @escaping (any SQLDatabase) async throws -> T) async throws -> T {
        let database = self.database
        return try await queue.run { try await body(database) }
    }

    /// Runs `sql` as it is, outside the store's rules: for tests that play a later version
    /// or a damaged database.
    func unsafeExecute(_ sql: String) async throws {
        try await transaction { db in try await db.raw("\(unsafeRaw: sql)").run() }
    }

    private func migrate() async throws {
        let dialect = self.dialect
        try await transaction { db in
            if dialect == .postgres {
                // Two instances starting at once: one migrates, the other waits and finds it done.
                try await db.raw("SELECT pg_advisory_xact_lock(7436591)").run()
            }
            try await db.raw("CREATE TABLE IF NOT EXISTS sync_schema (version BIGINT PRIMARY KEY)").run()
            let done = Set(try await db.raw("SELECT version FROM sync_schema").all().map { try $0.decode(column: "version", as: Int64.self) })
            let known = Set(SyncSchema.migrations.map(\.version))
            if let newer = done.subtracting(known).max() {
                throw SyncStoreError(.schema, "the database was written by a newer trousseau-syncd (schema version \(newer)); this one knows up to \(known.max() ?? 0)")
            }
            for migration in SyncSchema.migrations where !done.contains(migration.version) {
                for statement in migration.statements(dialect) {
                    try await db.raw("\(unsafeRaw: statement)").run()
                }
                try await db.raw("INSERT INTO sync_schema (version) VALUES (\(bind: migration.version))").run()
            }
        }
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    // MARK: Accounts and devices

    public func registerAccount(_ account: SyncIdentifier, device: SyncIdentifier, tokenHash: Data, quota: SyncQuota) async throws {
        let now = Self.now()
        try await transaction { db in
            if try await db.raw("SELECT 1 AS one FROM accounts WHERE account_id = \(bind: account.rawValue)").first() != nil {
                throw SyncStoreError(.accountExists, "an account with this id exists")
            }
            try await db.raw("""
                INSERT INTO accounts (account_id, created_at, quota_records, quota_bytes)
                VALUES (\(bind: account.rawValue), \(bind: now), \(bind: quota.records), \(bind: quota.bytes))
                """).run()
            try await Self.insertDevice(device, account: account, tokenHash: tokenHash, now: now, in: db)
        }
    }

    public func registerDevice(_ device: SyncIdentifier, account: SyncIdentifier, tokenHash: Data) async throws {
        let now = Self.now()
        // The account row, locked on PostgreSQL, serialises registrations across instances:
        // two at once cannot both take the last place under the device cap.
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        try await transaction { db in
            if try await db.raw("SELECT 1 AS one FROM accounts WHERE account_id = \(bind: account.rawValue)\(unsafeRaw: lock)").first() == nil {
                throw SyncStoreError(.noSuchAccount, "no account with this id")
            }
            try await Self.insertDevice(device, account: account, tokenHash: tokenHash, now: now, in: db)
        }
    }

    private static func insertDevice(_ device: SyncIdentifier, account: SyncIdentifier, tokenHash: Data, now: Int64, in db: any SQLDatabase) async throws {
        let taken = try await db.raw("""
            SELECT 1 AS one FROM devices WHERE (account_id = \(bind: account.rawValue) AND device_id = \(bind: device.rawValue))
            OR token_hash = \(bind: tokenHash)
            """).first()
        if taken != nil {
            throw SyncStoreError(.deviceExists, "a device with this id or credential exists")
        }
        let held = try await db.raw("SELECT COUNT(*) AS n FROM devices WHERE account_id = \(bind: account.rawValue)").first()?
            .decode(column: "n", as: Int64.self) ?? 0
        try AccountCaps.checkRoom(forDeviceAfter: held)
        try await db.raw("""
            INSERT INTO devices (account_id, device_id, token_hash, created_at)
            VALUES (\(bind: account.rawValue), \(bind: device.rawValue), \(bind: tokenHash), \(bind: now))
            """).run()
    }

    public func revokeDevice(_ device: SyncIdentifier, account: SyncIdentifier) async throws {
        try await transaction { db in
            let gone = try await db.raw("""
                DELETE FROM devices WHERE account_id = \(bind: account.rawValue) AND device_id = \(bind: device.rawValue) RETURNING device_id
                """).all()
            if gone.isEmpty { throw SyncStoreError(.noSuchDevice, "the account has no device with this id") }
        }
    }

    public func device(tokenHash: Data) async throws -> AuthenticatedDevice? {
        try await read { db in
            guard let row = try await db.raw("SELECT account_id, device_id FROM devices WHERE token_hash = \(bind: tokenHash)").first() else {
                return nil
            }
            guard let account = SyncIdentifier(try row.decode(column: "account_id", as: String.self)),
                let device = SyncIdentifier(try row.decode(column: "device_id", as: String.self))
            else { return nil }
            return AuthenticatedDevice(account: account, device: device)
        }
    }

    // MARK: Records

    public func apply(_ writes: [SyncRecord], account: SyncIdentifier, zone: SyncIdentifier) async throws -> [Int64] {
        try Self.validate(writes)
        let seqs = try await transaction { db in
            let a = account.rawValue, z = zone.rawValue
            // The zone row orders the feed: taking it (made on first use, for an existing
            // account only) locks it until commit, so feed positions follow commit order. On
            // SQLite, BEGIN IMMEDIATE already admits one writer.
            guard let zoneRow = try await db.raw("""
                INSERT INTO zones (account_id, zone_id, seq) SELECT account_id, \(bind: z), 0 FROM accounts WHERE account_id = \(bind: a)
                ON CONFLICT (account_id, zone_id) DO UPDATE SET seq = zones.seq RETURNING seq
                """).first()
            else { throw SyncStoreError(.noSuchAccount, "no account with this id") }
            let seq = try zoneRow.decode(column: "seq", as: Int64.self)

            let ids: [any Encodable & Sendable] = writes.map(\.record.rawValue)
            var held: [String: (version: Int64, size: Int64)] = [:]
            for row in try await db.raw("""
                SELECT record_id, version, size FROM records
                WHERE account_id = \(bind: a) AND zone_id = \(bind: z) AND record_id IN (\(binds: ids))
                """).all() {
                held[try row.decode(column: "record_id", as: String.self)] =
                    (try row.decode(column: "version", as: Int64.self), try row.decode(column: "size", as: Int64.self))
            }
            var conflicts: [BatchConflict.Record] = []
            var addedRecords: Int64 = 0, addedBytes: Int64 = 0
            for write in writes {
                let current = held[write.record.rawValue]
                if write.version != (current?.version ?? 0) + 1 {
                    conflicts.append(.init(record: write.record, serverVersion: current?.version ?? 0))
                }
                addedRecords += current == nil ? 1 : 0
                addedBytes += Int64(write.body.count) - (current?.size ?? 0)
            }
            if !conflicts.isEmpty { throw BatchConflict(conflicts: conflicts) }

            // The account's usage moves in the same statement that reads its quota (and, on
            // PostgreSQL, locks its row); past the quota the transaction rolls back.
            guard let usage = try await db.raw("""
                UPDATE accounts SET used_records = used_records + \(bind: addedRecords), used_bytes = used_bytes + \(bind: addedBytes)
                WHERE account_id = \(bind: a) RETURNING quota_records, quota_bytes, used_records, used_bytes
                """).first()
            else { throw SyncStoreError(.noSuchAccount, "no account with this id") }
            let usedRecords = try usage.decode(column: "used_records", as: Int64.self)
            let usedBytes = try usage.decode(column: "used_bytes", as: Int64.self)
            let quotaRecords = try usage.decode(column: "quota_records", as: Int64.self)
            let quotaBytes = try usage.decode(column: "quota_bytes", as: Int64.self)
            if (addedRecords > 0 && usedRecords > quotaRecords) || (addedBytes > 0 && usedBytes > quotaBytes) {
                throw SyncStoreError(.quotaExceeded, "the account's quota is used up (\(usedRecords) records, \(usedBytes) bytes with this batch)")
            }
            try await db.raw("UPDATE zones SET seq = \(bind: seq + Int64(writes.count)) WHERE account_id = \(bind: a) AND zone_id = \(bind: z)").run()

            // Every write in one statement: a batch costs the same few round trips whatever its size.
            let seqs = (1...Int64(writes.count)).map { seq + $0 }
            let rows: [SQLQueryString] = zip(writes, seqs).map { write, position in
                """
                (\(bind: a), \(bind: z), \(bind: write.record.rawValue), \(bind: Int64(write.type)), \(bind: write.version), \(bind: position), \
                \(bind: Int64(write.tombstone ? 1 : 0)), \(bind: write.body), \(bind: Int64(write.body.count)))
                """
            }
            try await db.raw("""
                INSERT INTO records (account_id, zone_id, record_id, rtype, version, seq, tombstone, body, size)
                VALUES \(rows.joined(separator: ", "))
                ON CONFLICT (account_id, zone_id, record_id) DO UPDATE SET
                    rtype = excluded.rtype, version = excluded.version, seq = excluded.seq,
                    tombstone = excluded.tombstone, body = excluded.body, size = excluded.size
                """).run()
            try await self.notify(ChangeHint(zone: zone, seq: seqs[seqs.count - 1]), account: account, in: db)
            return seqs
        }
        published(ChangeHint(zone: zone, seq: seqs[seqs.count - 1]), account: account)
        return seqs
    }

    /// Refuses a batch that no honest device sends, before it reaches the database.
    static func validate(_ writes: [SyncRecord]) throws {
        guard !writes.isEmpty else { throw SyncStoreError(.invalid, "a batch needs at least one write") }
        guard writes.count <= SyncLimits.batchWrites else {
            throw SyncStoreError(.invalid, "a batch holds at most \(SyncLimits.batchWrites) writes, not \(writes.count)")
        }
        guard Set(writes.map(\.record)).count == writes.count else {
            throw SyncStoreError(.invalid, "a batch writes each record once")
        }
        for write in writes {
            guard write.body.count <= SyncLimits.recordBody else {
                throw SyncStoreError(.invalid, "a record's body is at most \(SyncLimits.recordBody) bytes, not \(write.body.count)")
            }
            guard SyncLimits.recordTypes.contains(write.type) else { throw SyncStoreError(.invalid, "record type \(write.type) is out of range") }
            guard write.version >= 1 else { throw SyncStoreError(.invalid, "versions start at 1") }
        }
    }

    public func changes(account: SyncIdentifier, zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse {
        let limit = max(1, min(limit, SyncLimits.changesPage))
        return try await read { db in
            let rows = try await db.raw("""
                SELECT record_id, rtype, version, seq, tombstone, body FROM records
                WHERE account_id = \(bind: account.rawValue) AND zone_id = \(bind: zone.rawValue) AND seq > \(bind: after)
                ORDER BY seq LIMIT \(bind: Int64(limit + 1))
                """).all()
            var records: [SyncRecord] = []
            for row in rows.prefix(limit) {
                guard let id = SyncIdentifier(try row.decode(column: "record_id", as: String.self)) else {
                    throw SyncStoreError(.schema, "a stored record id is ill-formed")
                }
                records.append(SyncRecord(
                    record: id, type: Int(try row.decode(column: "rtype", as: Int64.self)),
                    version: try row.decode(column: "version", as: Int64.self),
                    tombstone: try row.decode(column: "tombstone", as: Int64.self) != 0,
                    body: try row.decode(column: "body", as: Data.self),
                    seq: try row.decode(column: "seq", as: Int64.self)))
            }
            return ChangesResponse(records: records, high: records.last?.seq ?? after, more: rows.count > limit)
        }
    }

    // MARK: Membership

    public func appendMembership(_ entry: MembershipEntry, account: SyncIdentifier) async throws {
        guard entry.entry.count <= SyncLimits.membershipEntry, !entry.entry.isEmpty else {
            throw SyncStoreError(.invalid, "a membership entry is 1 to \(SyncLimits.membershipEntry) bytes")
        }
        try AccountCaps.checkRoom(forMembership: entry)  // the chain's cap, before the database
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        try await transaction { db in
            // The account row serialises appends across server instances.
            guard try await db.raw("SELECT account_id FROM accounts WHERE account_id = \(bind: account.rawValue)\(unsafeRaw: lock)").first() != nil else {
                throw SyncStoreError(.noSuchAccount, "no account with this id")
            }
            // The entry must extend the chain's verified part (MembershipAppendCheck); an
            // unverified tail stored before is replaced by it.
            let stored = try await db.raw("SELECT idx, entry FROM membership WHERE account_id = \(bind: account.rawValue) ORDER BY idx").all().map {
                MembershipEntry(index: try $0.decode(column: "idx", as: Int64.self), entry: try $0.decode(column: "entry", as: Data.self))
            }
            let chain = MembershipAppendCheck(account: account, stored: stored)
            try chain.check(entry, account: account)
            if chain.unverifiedTail > 0 {
                try await db.raw("DELETE FROM membership WHERE account_id = \(bind: account.rawValue) AND idx >= \(bind: chain.length)").run()
            }
            try await db.raw("INSERT INTO membership (account_id, idx, entry) VALUES (\(bind: account.rawValue), \(bind: entry.index), \(bind: entry.entry))").run()
            try await self.notify(ChangeHint(zone: nil, seq: entry.index), account: account, in: db)
        }
        published(ChangeHint(zone: nil, seq: entry.index), account: account)
    }

    public func membership(account: SyncIdentifier, after: Int64, limit: Int) async throws -> MembershipResponse {
        let limit = max(1, min(limit, SyncLimits.membershipPage))
        return try await read { db in
            // One row past the page says whether more follow.
            let rows = try await db.raw("""
                SELECT idx, entry FROM membership WHERE account_id = \(bind: account.rawValue) AND idx > \(bind: after)
                ORDER BY idx LIMIT \(bind: Int64(limit + 1))
                """).all()
            let entries = try rows.prefix(limit).map {
                MembershipEntry(index: try $0.decode(column: "idx", as: Int64.self), entry: try $0.decode(column: "entry", as: Data.self))
            }
            return MembershipResponse(entries: entries, more: rows.count > limit)
        }
    }
}
