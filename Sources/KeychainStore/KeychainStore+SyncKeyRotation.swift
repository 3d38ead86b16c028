import FoundationEssentials
import GRDB
import KeychainModel

/// Which of a zone's keys are current here and which pointer said so (migration v7).
public struct SyncKeyPointerRow: Sendable, Equatable {
    public var keys: SyncZoneKeys
    /// The version of the pointer record the keys came from (0: the founding keys).
    public var version: Int64
    /// The chain's length when the keys were made (0: the founding keys).
    public var epoch: Int64

    public init(keys: SyncZoneKeys, version: Int64, epoch: Int64) {
        self.keys = keys
        self.version = version
        self.epoch = epoch
    }
}

/// The store's side of key rotation (docs/ARCHITECTURE.md, "Removing a device"): the current
/// keys move only forward, with the pointer that named them.
extension KeychainStore {
    /// The zone's current keys and the pointer version and epoch they came from.
    public func syncKeyPointer(_ zone: String) throws -> SyncKeyPointerRow? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT zone, zone_key, class_a_key, class_c_key, key_version, key_epoch FROM sync_zones WHERE zone = ?", arguments: [zone]
            ).flatMap { row in
                guard let zoneKey: String = row["zone_key"], let classA: String = row["class_a_key"], let classC: String = row["class_c_key"] else { return nil }
                return SyncKeyPointerRow(
                    keys: SyncZoneKeys(zone: row["zone"], zoneKey: zoneKey, classA: classA, classC: classC), version: row["key_version"],
                    epoch: row["key_epoch"])
            }
        }
    }

    /// Keeps `keys` and makes `pointer`'s keys current, in one transaction — only when its
    /// version is newer than the pointer the current keys came from (false otherwise: nothing
    /// is written).
    @discardableResult
    public func adoptSyncKeys(_ keys: [SyncKeyRow], pointer: SyncKeyPointerRow) throws -> Bool {
        try write { db in
            let current = try Int64.fetchOne(db, sql: "SELECT key_version FROM sync_zones WHERE zone = ?", arguments: [pointer.keys.zone])
            guard let current, pointer.version > current else { return false }
            for key in keys {
                try db.execute(
                    sql: "INSERT INTO sync_keys (key, zone, role, blob) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    arguments: [key.key, key.zone, key.role, key.blob])
            }
            try db.execute(
                sql: "UPDATE sync_zones SET zone_key = ?, class_a_key = ?, class_c_key = ?, key_version = ?, key_epoch = ? WHERE zone = ?",
                arguments: [pointer.keys.zoneKey, pointer.keys.classA, pointer.keys.classC, pointer.version, pointer.epoch, pointer.keys.zone])
            return true
        }
    }

    /// The highest version of `record` the server has given this device (from the view
    /// signed heads keep), if any.
    public func syncViewVersion(zone: String, record: String) throws -> Int64? {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT max(version) FROM sync_view WHERE zone = ? AND record = ?", arguments: [zone, record])
        }
    }

    /// Every mirror row of `zone` (the records the server last acknowledged or gave, as this
    /// device merged them).
    public func syncMirrorRows(zone: String) throws -> [SyncMirrorRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT record, zone, type, version, tombstone, body FROM sync_mirror WHERE zone = ? ORDER BY record", arguments: [zone]).map {
                SyncMirrorRecord(record: $0["record"], zone: $0["zone"], type: $0["type"], version: $0["version"], tombstone: $0["tombstone"], body: $0["body"])
            }
        }
    }
}
