public import FoundationEssentials
import GRDB
import KeychainCallers
import KeychainCrypto
public import KeychainModel

/// The account this keychain syncs with: one row, absent while sync is off.
public struct SyncAccountRecord: Sendable, Equatable {
    /// The server's base URL.
    public var server: String
    public var account: String
    /// This device's id in the account.
    public var device: String
    /// The device's identity as the enclave wrapped it (`SyncIdentityBlob`).
    public var identity: Data
    /// The last hybrid logical clock value this keychain issued or saw.
    public var clock: HybridLogicalClock
    public var enabled: Date

    public init(server: String, account: String, device: String, identity: Data, clock: HybridLogicalClock = HybridLogicalClock(rawValue: 0), enabled: Date = Date()) {
        self.server = server
        self.account = account
        self.device = device
        self.identity = identity
        self.clock = clock
        self.enabled = enabled
    }
}

/// A local change waiting in the outgoing queue.
public struct SyncPendingChange: Sendable, Equatable {
    /// The record id: the item's uuid in lowercase text.
    public var record: String
    public var itemClass: ItemClass
    public var tombstone: Bool
    /// When the change was made, by this keychain's clock.
    public var clock: HybridLogicalClock
    /// Sends tried and not acknowledged.
    public var attempts: Int
}

extension KeychainStore {
    /// The account sync is enabled with, or nil when it is off.
    public func syncAccount() throws -> SyncAccountRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT server, account, device, identity, clock, enabled FROM sync_account").map {
                SyncAccountRecord(
                    server: $0["server"], account: $0["account"], device: $0["device"], identity: $0["identity"],
                    clock: HybridLogicalClock(rawValue: $0["clock"]), enabled: Date(timeIntervalSinceReferenceDate: $0["enabled"]))
            }
        }
    }

    /// Turns sync on with `account` and queues every item that may sync, in one transaction.
    ///
    /// - Throws: `errSecDuplicateItem` when sync is already enabled (nothing changes).
    public func enableSync(_ account: SyncAccountRecord) throws {
        try enableSync(account, circle: nil)
    }

    /// Turns sync on with `account` and the circle this device founded or joined — its
    /// verified membership chain, its sync keys and its zone's current keys — and queues
    /// every item that may sync, all in one transaction.
    ///
    /// - Throws: `errSecDuplicateItem` when sync is already enabled (nothing changes).
    public func enableSync(_ account: SyncAccountRecord, circle: SyncCircleRows?) throws {
        try write { db in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_account") == 0 else {
                throw KeychainError(status: OSStatusCode.duplicateItem, message: "sync is already enabled for this keychain")
            }
            try db.execute(
                sql: "INSERT INTO sync_account (id, server, account, device, identity, clock, enabled) VALUES (1, ?, ?, ?, ?, ?, ?)",
                arguments: [account.server, account.account, account.device, account.identity, account.clock.rawValue, account.enabled.timeIntervalSinceReferenceDate])
            if let circle { try circle.insert(in: db) }
            let now = Date()
            for itemClass in ItemClass.stored {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT \(StoredRow.columns) FROM \(itemClass.rawValue) WHERE sync = 1 AND tomb = 0 ORDER BY rowid")
                for row in try rows.map({ try StoredRow($0, itemClass: itemClass) }) where Self.syncs(row.identity) {
                    try journal(.upsert, uuid: row.identity.uuid, of: itemClass, at: now, in: db)
                }
            }
        }
    }

    /// Turns sync off: forgets the account, the circle, the keys, the mirror, the queues and
    /// the history. The items stay, synchronizable as they were; enabling again re-sends them.
    public func disableSync() throws {
        try write { db in
            for table in [
                "sync_account", "sync_membership", "sync_zones", "sync_keys", "sync_mirror", "sync_outgoing", "sync_incoming", "sync_history", "sync_view",
                "sync_heads", "sync_alarms",
            ] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
        }
    }

    /// The outgoing queue, oldest change first: at most `limit` changes made after `after`.
    public func pendingSyncChanges(after: HybridLogicalClock? = nil, limit: Int) throws -> [SyncPendingChange] {
        try pendingSyncChanges(
            "SELECT record, class, tombstone, clock, attempts FROM sync_outgoing WHERE clock > ? ORDER BY clock LIMIT ?",
            [after?.rawValue ?? Int64.min, limit])
    }

    /// The queued change of `record`, if any.
    public func pendingSyncChange(_ record: String) throws -> SyncPendingChange? {
        try pendingSyncChanges("SELECT record, class, tombstone, clock, attempts FROM sync_outgoing WHERE record = ?", [record]).first
    }

    private func pendingSyncChanges(_ sql: String, _ arguments: StatementArguments) throws -> [SyncPendingChange] {
        try read { db in
            try Row.fetchAll(statements.statement(sql, in: db), arguments: arguments)
                .map { row in
                    guard let itemClass = ItemClass(rawValue: row["class"]) else {
                        throw KeychainError.decode("the sync queue names an unknown item class")
                    }
                    return SyncPendingChange(
                        record: row["record"], itemClass: itemClass, tombstone: row["tombstone"],
                        clock: HybridLogicalClock(rawValue: row["clock"]), attempts: row["attempts"])
                }
        }
    }
}
