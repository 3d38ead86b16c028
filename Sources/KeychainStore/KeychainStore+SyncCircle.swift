public import FoundationEssentials
import GRDB
import KeychainModel

/// A sync key as the store keeps it: the enclave's blob (`SyncKeyBlob`), by id, with its zone
/// and role (`SyncKeyRole`'s raw value).
public struct SyncKeyRow: Sendable, Equatable {
    public var key: String
    public var zone: String
    public var role: Int
    public var blob: Data

    public init(key: String, zone: String, role: Int, blob: Data) {
        self.key = key
        self.zone = zone
        self.role = role
        self.blob = blob
    }
}

/// A zone's current keys: the zone key and the class keys records are sealed under.
public struct SyncZoneKeys: Sendable, Equatable {
    public var zone: String
    public var zoneKey: String
    public var classA: String
    public var classC: String

    public init(zone: String, zoneKey: String, classA: String, classC: String) {
        self.zone = zone
        self.zoneKey = zoneKey
        self.classA = classA
        self.classC = classC
    }
}

/// What a device keeps of its circle when sync is enabled: the membership chain it verified
/// (each entry's bytes, from index 0), its sync keys, and its zone's current keys.
public struct SyncCircleRows: Sendable, Equatable {
    public var membership: [Data]
    public var keys: [SyncKeyRow]
    public var zone: SyncZoneKeys

    public init(membership: [Data], keys: [SyncKeyRow], zone: SyncZoneKeys) {
        self.membership = membership
        self.keys = keys
        self.zone = zone
    }

    func insert(in db: Database) throws {
        for (index, entry) in membership.enumerated() {
            try db.execute(sql: "INSERT INTO sync_membership (idx, entry) VALUES (?, ?)", arguments: [index, entry])
        }
        for key in keys {
            try db.execute(sql: "INSERT INTO sync_keys (key, zone, role, blob) VALUES (?, ?, ?, ?)", arguments: [key.key, key.zone, key.role, key.blob])
        }
        try db.execute(
            sql: """
                INSERT INTO sync_zones (zone, cursor, zone_key, class_a_key, class_c_key) VALUES (?, 0, ?, ?, ?)
                ON CONFLICT (zone) DO UPDATE SET zone_key = excluded.zone_key, class_a_key = excluded.class_a_key, class_c_key = excluded.class_c_key
                """,
            arguments: [zone.zone, zone.zoneKey, zone.classA, zone.classC])
    }
}

/// The device circle's side of the store: the membership chain as this device verified it,
/// and the sync keys' blobs (docs/ARCHITECTURE.md, "Sync keys live in the enclave").
extension KeychainStore {
    /// The membership chain as this device pinned it, entry bytes from index 0.
    public func syncMembership() throws -> [Data] {
        try read { db in try Data.fetchAll(db, sql: "SELECT entry FROM sync_membership ORDER BY idx") }
    }

    /// Appends verified entries at the end of the pinned chain.
    ///
    /// - Throws: `errSecParam` when `from` is not the chain's length (nothing is written).
    public func appendSyncMembership(_ entries: [Data], from index: Int) throws {
        try write { db in
            let length = try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_membership") ?? 0
            guard length == index else { throw KeychainError.param("the membership chain here has \(length) entries, not \(index)") }
            for (offset, entry) in entries.enumerated() {
                try db.execute(sql: "INSERT INTO sync_membership (idx, entry) VALUES (?, ?)", arguments: [index + offset, entry])
            }
        }
    }

    /// Every sync key kept for `zone`.
    public func syncKeys(zone: String) throws -> [SyncKeyRow] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT key, zone, role, blob FROM sync_keys WHERE zone = ? ORDER BY key", arguments: [zone]).map {
                SyncKeyRow(key: $0["key"], zone: $0["zone"], role: $0["role"], blob: $0["blob"])
            }
        }
    }

    /// Keeps sync keys (a key already kept is left as it is).
    public func saveSyncKeys(_ keys: [SyncKeyRow]) throws {
        try write { db in
            for key in keys {
                try db.execute(
                    sql: "INSERT INTO sync_keys (key, zone, role, blob) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    arguments: [key.key, key.zone, key.role, key.blob])
            }
        }
    }

    /// The zone's current keys, once it has them.
    public func syncZoneKeys(_ zone: String) throws -> SyncZoneKeys? {
        try syncKeyPointer(zone)?.keys
    }

    /// Counts of what sync keeps, for `security sync status`.
    public func syncCounts() throws -> (pending: Int, mirrored: Int, waiting: Int, history: Int) {
        try read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_outgoing") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_mirror WHERE tombstone = 0") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_incoming") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_history") ?? 0
            )
        }
    }
}
