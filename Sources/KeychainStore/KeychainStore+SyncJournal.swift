import FoundationEssentials
import GRDB
import KeychainCrypto
import KeychainCallers
import KeychainModel

/// The store's side of sync: the outgoing queue a local change joins, in the transaction of
/// the change itself (docs/ARCHITECTURE.md, "Sync"). Only items that may leave the device are
/// queued — synchronizable and not ThisDeviceOnly — and only while an account is enabled.
extension KeychainStore {
    /// What a change does to an item's sync record.
    enum SyncChange {
        /// The item exists (added, changed, or became synchronizable): send its value.
        case upsert
        /// The item is gone from sync (deleted, or no longer synchronizable): send a tombstone.
        case tombstone
    }

    /// Whether an item in this state is one sync carries: synchronizable, live, not
    /// ThisDeviceOnly, in a group that may sync.
    static func syncs(_ item: KeychainItem) -> Bool {
        item.synchronizable && !item.tombstone && !item.protection.isThisDeviceOnly && AccessGroups.maySync(item.accessGroup)
    }

    /// Whether a stored row is one sync carries (as ``syncs(_:)-(KeychainItem)``).
    static func syncs(_ row: RowIdentity) -> Bool {
        row.synchronizable && !row.tombstone && !row.protection.isThisDeviceOnly && AccessGroups.maySync(row.accessGroup)
    }

    /// Queues `change` of the item with `uuid` when an account is enabled: ticks the account's
    /// hybrid logical clock and keeps one row per record (a later change replaces an earlier
    /// unsent one; the engine reads the item's current value when it sends).
    func journal(_ change: SyncChange, uuid: UUID, of itemClass: ItemClass, at now: Date, in db: Database) throws {
        let tick = try Int64.fetchOne(
            statements.statement("UPDATE sync_account SET clock = max(clock + 1, ?) RETURNING clock", in: db),
            arguments: [HybridLogicalClock.wall(now).rawValue])
        guard let tick else { return }  // sync is off
        try statements.statement(
            """
            INSERT INTO sync_outgoing (record, class, tombstone, clock, attempts) VALUES (?, ?, ?, ?, 0)
            ON CONFLICT (record) DO UPDATE SET class = excluded.class, tombstone = excluded.tombstone,
              clock = excluded.clock, attempts = 0
            """, in: db
        ).execute(arguments: [Self.syncRecordID(uuid), itemClass.rawValue, change == .tombstone ? 1 : 0, tick])
        db.afterNextTransaction { [syncChanges] _ in syncChanges.fire() }
    }

    /// Queues what replacing `old` by `new` (the same record) means for sync, if anything.
    func journalChange(from old: KeychainItem, to new: KeychainItem, at now: Date, in db: Database) throws {
        if Self.syncs(new) {
            try journal(.upsert, uuid: new.persistentReference.uuid, of: new.itemClass, at: now, in: db)
        } else if Self.syncs(old) {
            try journal(.tombstone, uuid: old.persistentReference.uuid, of: old.itemClass, at: now, in: db)
        }
    }

    /// A sync record's id: its item's uuid in lowercase text (a `SyncIdentifier`).
    static func syncRecordID(_ uuid: UUID) -> String {
        uuid.uuidString.lowercased()
    }
}
