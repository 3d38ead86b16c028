import GRDB
import GRDBSQLite
import KeychainModel

/// Schema changes, applied only through migrations.
///
/// Every shipped migration is literal SQL that never changes once released (GRDB's "Good
/// Practices for Migrations"): a keychain written by any earlier version holds exactly what
/// these statements made, and the keychain files in `Tests/SecurityToolTests/Fixtures/keychains`
/// (one per earlier version, written by that version's code) must open. A change to the
/// schema is a new migration at the end of the list; the item tables' token columns are
/// those the migrations made (``FrozenSchema``), never computed from the attribute catalogue.
enum StoreSchema {
    /// The migrations in order: identifier and statements.
    static let migrations: [(identifier: String, statements: [String])] = [
        ("v1 item tables", [
            "CREATE TABLE genp (rowid INTEGER PRIMARY KEY, uuid BLOB NOT NULL UNIQUE, agrp TEXT NOT NULL, pdmn TEXT NOT NULL, sync INTEGER NOT NULL, tomb INTEGER NOT NULL, pk BLOB NOT NULL UNIQUE, t_desc INTEGER, t_icmt INTEGER, t_labl INTEGER, t_alis INTEGER, t_prot INTEGER, t_acct INTEGER, t_svce INTEGER, t_gena INTEGER, t_pdmn INTEGER, t_vwht INTEGER, t_tkid INTEGER, meta BLOB NOT NULL, secret BLOB NOT NULL)",
            "CREATE INDEX genp_t_labl ON genp(t_labl)",
            "CREATE INDEX genp_t_acct ON genp(t_acct)",
            "CREATE INDEX genp_t_svce ON genp(t_svce)",
            "CREATE TABLE inet (rowid INTEGER PRIMARY KEY, uuid BLOB NOT NULL UNIQUE, agrp TEXT NOT NULL, pdmn TEXT NOT NULL, sync INTEGER NOT NULL, tomb INTEGER NOT NULL, pk BLOB NOT NULL UNIQUE, t_desc INTEGER, t_icmt INTEGER, t_labl INTEGER, t_alis INTEGER, t_prot INTEGER, t_acct INTEGER, t_sdmn INTEGER, t_srvr INTEGER, t_ptcl INTEGER, t_atyp INTEGER, t_path INTEGER, t_pdmn INTEGER, t_vwht INTEGER, t_tkid INTEGER, meta BLOB NOT NULL, secret BLOB NOT NULL)",
            "CREATE INDEX inet_t_labl ON inet(t_labl)",
            "CREATE INDEX inet_t_acct ON inet(t_acct)",
            "CREATE INDEX inet_t_sdmn ON inet(t_sdmn)",
            "CREATE INDEX inet_t_srvr ON inet(t_srvr)",
            "CREATE INDEX inet_t_ptcl ON inet(t_ptcl)",
            "CREATE INDEX inet_t_atyp ON inet(t_atyp)",
            "CREATE INDEX inet_t_path ON inet(t_path)",
            "CREATE TABLE cert (rowid INTEGER PRIMARY KEY, uuid BLOB NOT NULL UNIQUE, agrp TEXT NOT NULL, pdmn TEXT NOT NULL, sync INTEGER NOT NULL, tomb INTEGER NOT NULL, pk BLOB NOT NULL UNIQUE, t_labl INTEGER, t_alis INTEGER, t_subj INTEGER, t_issr INTEGER, t_slnr INTEGER, t_skid INTEGER, t_pkhh INTEGER, t_pdmn INTEGER, t_vwht INTEGER, t_tkid INTEGER, meta BLOB NOT NULL, secret BLOB NOT NULL)",
            "CREATE INDEX cert_t_labl ON cert(t_labl)",
            "CREATE INDEX cert_t_issr ON cert(t_issr)",
            "CREATE INDEX cert_t_slnr ON cert(t_slnr)",
            "CREATE INDEX cert_t_pkhh ON cert(t_pkhh)",
            "CREATE TABLE keys (rowid INTEGER PRIMARY KEY, uuid BLOB NOT NULL UNIQUE, agrp TEXT NOT NULL, pdmn TEXT NOT NULL, sync INTEGER NOT NULL, tomb INTEGER NOT NULL, pk BLOB NOT NULL UNIQUE, t_labl INTEGER, t_alis INTEGER, t_klbl INTEGER, t_atag INTEGER, t_pdmn INTEGER, t_vwht INTEGER, t_tkid INTEGER, meta BLOB NOT NULL, secret BLOB NOT NULL)",
            "CREATE INDEX keys_t_labl ON keys(t_labl)",
            "CREATE INDEX keys_t_klbl ON keys(t_klbl)",
            "CREATE INDEX keys_t_atag ON keys(t_atag)",
        ]),
        // One index on both lookup attributes of each class (the more selective first, as
        // Apple's UNIQUE constraints lead with them) replaces the index on the first alone.
        ("v2 lookup pair indexes", [
            "DROP INDEX IF EXISTS genp_t_acct",
            "CREATE INDEX genp_t_acct_t_svce ON genp(t_acct, t_svce)",
            "DROP INDEX IF EXISTS inet_t_acct",
            "CREATE INDEX inet_t_acct_t_srvr ON inet(t_acct, t_srvr)",
            "DROP INDEX IF EXISTS cert_t_slnr",
            "CREATE INDEX cert_t_slnr_t_issr ON cert(t_slnr, t_issr)",
            "DROP INDEX IF EXISTS keys_t_atag",
            "CREATE INDEX keys_t_atag_t_klbl ON keys(t_atag, t_klbl)",
        ]),
        // One row per attribute of a Secret Service item (its keyed token), and the marker
        // every such item carries: equality searches on any attributes are index lookups.
        // Rows go with their item, whichever way it is deleted.
        ("v3 secret service attribute tokens", [
            "CREATE TABLE genp_attribute (token INTEGER NOT NULL, item INTEGER NOT NULL, PRIMARY KEY (token, item)) WITHOUT ROWID",
            "CREATE INDEX genp_attribute_item ON genp_attribute(item)",
            "CREATE TRIGGER genp_attribute_delete AFTER DELETE ON genp BEGIN DELETE FROM genp_attribute WHERE item = old.rowid; END",
        ]),
        // The collections callers made (their items are in an access group of their own) and
        // the login collection's label once changed; each scope's aliases. A created
        // collection's items are one access group: deleting or listing them is a range of
        // the partial index, which no item query can use (a search by tokens would otherwise
        // seek it before each row: SQLite preferred it to the rowid).
        ("v4 secret service collections", [
            """
            CREATE TABLE secret_collection (owner TEXT NOT NULL, name TEXT NOT NULL, label TEXT NOT NULL,
              created REAL NOT NULL, modified REAL NOT NULL, PRIMARY KEY (owner, name)) WITHOUT ROWID
            """,
            """
            CREATE TABLE secret_alias (owner TEXT NOT NULL, alias TEXT NOT NULL, name TEXT NOT NULL,
              PRIMARY KEY (owner, alias)) WITHOUT ROWID
            """,
            "CREATE INDEX genp_collection_agrp ON genp(agrp) WHERE instr(agrp, '/collection/') > 0",
        ]),
        // Sync between the user's devices (docs/ARCHITECTURE.md, "Sync"). No plaintext
        // attribute is in any of these tables: records are the enclave's envelopes, keys its
        // wrapped blobs; a record's id is its item's uuid (lowercase text). Nothing here names
        // an item table (no foreign key, no trigger): the store queues a change by an explicit
        // call in the same transaction, so the engine's own applies queue nothing.
        //   sync_account: the one account this keychain syncs with (absent: sync is off), the
        //     device's identity blob, the last hybrid logical clock value issued or seen.
        //   sync_membership: the device circle's chain as this device verified and pinned it.
        //   sync_zones: each zone's feed cursor and current key ids (zone, class A, class C).
        //   sync_keys: every sync key's wrapped blob, by id.
        //   sync_mirror: each record as the server last acknowledged it: the merge base.
        //   sync_outgoing: local changes waiting to be sent, one row per record, newest wins.
        //   sync_incoming: records received and not yet applied (class A while locked, or a
        //     key not yet shared).
        //   sync_history: values that lost a merge, as sealed envelopes.
        ("v5 sync engine", [
            """
            CREATE TABLE sync_account (id INTEGER PRIMARY KEY CHECK (id = 1), server TEXT NOT NULL,
              account TEXT NOT NULL, device TEXT NOT NULL, identity BLOB NOT NULL, clock INTEGER NOT NULL,
              enabled REAL NOT NULL)
            """,
            "CREATE TABLE sync_membership (idx INTEGER PRIMARY KEY, entry BLOB NOT NULL)",
            """
            CREATE TABLE sync_zones (zone TEXT NOT NULL PRIMARY KEY, cursor INTEGER NOT NULL, zone_key TEXT,
              class_a_key TEXT, class_c_key TEXT) WITHOUT ROWID
            """,
            "CREATE TABLE sync_keys (key TEXT NOT NULL PRIMARY KEY, zone TEXT NOT NULL, role INTEGER NOT NULL, blob BLOB NOT NULL) WITHOUT ROWID",
            """
            CREATE TABLE sync_mirror (record TEXT NOT NULL PRIMARY KEY, zone TEXT NOT NULL, type INTEGER NOT NULL,
              version INTEGER NOT NULL, tombstone INTEGER NOT NULL, body BLOB NOT NULL) WITHOUT ROWID
            """,
            """
            CREATE TABLE sync_outgoing (record TEXT NOT NULL PRIMARY KEY, class TEXT NOT NULL, tombstone INTEGER NOT NULL,
              clock INTEGER NOT NULL, attempts INTEGER NOT NULL) WITHOUT ROWID
            """,
            """
            CREATE TABLE sync_incoming (record TEXT NOT NULL PRIMARY KEY, zone TEXT NOT NULL, type INTEGER NOT NULL,
              version INTEGER NOT NULL, tombstone INTEGER NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL) WITHOUT ROWID
            """,
            """
            CREATE TABLE sync_history (id INTEGER PRIMARY KEY, record TEXT NOT NULL, version INTEGER NOT NULL,
              clock INTEGER NOT NULL, writer TEXT NOT NULL, recorded REAL NOT NULL, body BLOB NOT NULL)
            """,
            "CREATE INDEX sync_history_record ON sync_history(record)",
        ]),
        // Signed heads (issue 33; docs/ARCHITECTURE.md, "Signed heads").
        //   sync_view: every version of every record (heads aside) the server gave this
        //     device, with its feed position and the SHA-256 of its body: enough to rebuild
        //     what this device had been given at any position another device's head names.
        //   sync_heads: each device's latest head as received (this device's as published),
        //     and whether it was compared and agreed.
        //   sync_alarms: a zone stopped because a head disagreed with this device's view: until
        //     a head of that device, as new or newer, agrees.
        ("v6 sync heads", [
            """
            CREATE TABLE sync_view (zone TEXT NOT NULL, record TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL,
              hash BLOB NOT NULL, PRIMARY KEY (zone, record, version)) WITHOUT ROWID
            """,
            """
            CREATE TABLE sync_heads (zone TEXT NOT NULL, device TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL,
              root BLOB NOT NULL, chain_length INTEGER NOT NULL, chain_head BLOB NOT NULL, written INTEGER NOT NULL,
              agreed INTEGER NOT NULL, received REAL NOT NULL, PRIMARY KEY (zone, device)) WITHOUT ROWID
            """,
            """
            CREATE TABLE sync_alarms (zone TEXT NOT NULL PRIMARY KEY, device TEXT NOT NULL, version INTEGER NOT NULL,
              seq INTEGER NOT NULL, reason TEXT NOT NULL, raised REAL NOT NULL) WITHOUT ROWID
            """,
        ]),
        // Key rotation (issue 33; docs/ARCHITECTURE.md, "Removing a device"): the version of
        // the zone's key pointer record whose keys are current here (0: the founding keys,
        // which no pointer names), and that pointer's epoch (the chain's length when the keys
        // were made).
        ("v7 sync key pointers", [
            "ALTER TABLE sync_zones ADD COLUMN key_version INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE sync_zones ADD COLUMN key_epoch INTEGER NOT NULL DEFAULT 0",
        ]),
    ]

    /// The condition of `genp_collection_agrp` (migration v4): a query uses the index only
    /// when it says this term itself (SQLite's rule for partial indexes).
    static let collectionGroupTerm = "instr(agrp, '/collection/') > 0"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (identifier, statements) in migrations {
            migrator.registerMigration(identifier) { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        }
        return migrator
    }

    /// Brings the file up to the newest schema.
    ///
    /// - Throws: `errSecInvalidKeychain` for a file a newer version of Trousseau has
    ///   migrated further (its items may depend on tables this version does not know).
    static func migrate(_ writer: some DatabaseWriter) throws {
        let migrator = migrator
        if try writer.read(migrator.hasBeenSuperseded) {
            throw KeychainError(status: OSStatusCode.invalidKeychain, message: "the keychain was written by a newer version of Trousseau")
        }
        try migrator.migrate(writer)
    }

    /// Checks that the file's schema is exactly what the migrations make. The schema is
    /// stored in the database file as SQL text: a damaged byte there renames or retypes a
    /// column, and every statement would then fail with an SQL error.
    ///
    /// - Throws: `errSecDecode` naming the first object that differs.
    static func verify(_ db: Database) throws {
        var found = try FrozenSchema.objects(in: db)
        // A file keychain's header table, made with the file (FileKeychainFile), not by a migration.
        if let header = found.firstIndex(where: { $0.name == FileKeychainFile.headerTable }) {
            guard found[header].sql == FileKeychainFile.headerTableSQL else { throw damaged(FileKeychainFile.headerTable) }
            found.remove(at: header)
        }
        guard found != FrozenSchema.current.objects else {
            return
        }
        let expected = Dictionary(FrozenSchema.current.objects.map { ($0.name, $0) }) { first, _ in first }
        let differing = found.first { expected[$0.name] != $0 }?.table
            ?? FrozenSchema.current.objects.first { !found.contains($0) }?.table ?? "?"
        throw damaged(differing)
    }

    private static func damaged(_ table: String) -> KeychainError {
        KeychainError.decode("the keychain database is damaged: table \(table) is not as its migrations made it")
    }
}

/// The schema the migrations make: the objects `verify` expects, and the columns the item
/// tables really have.
///
/// ``current`` is ``pinned``, the schema written out as literals
/// (FrozenSchema+Pinned.swift), which a test holds equal to ``made()``, what applying the
/// migrations to an empty database gives: applying them at every start cost securityd 12.5
/// million instructions (2.2 ms; the two ALTER TABLEs 0.9 ms of it).
struct FrozenSchema: Equatable, Sendable {
    struct Object: Equatable, Sendable {
        var type: String
        var name: String
        var table: String
        var sql: String?
    }

    let objects: [Object]
    /// Each table's column names, in order.
    let columns: [String: [String]]

    static var current: FrozenSchema { pinned }

    /// The schema the migrations make, read from an in-memory SQLite database they were
    /// applied to. Made with SQLite's C API directly: a GRDB queue for it left a dispatch
    /// worker thread in the process for good.
    static func made() -> FrozenSchema {
        var db: OpaquePointer?
        defer { sqlite3_close(db) }
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            fatalError("no in-memory SQLite database")
        }
        for (identifier, statements) in StoreSchema.migrations {
            for statement in statements where sqlite3_exec(db, statement, nil, nil, nil) != SQLITE_OK {
                fatalError("migration \(identifier) does not apply to an empty database: \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        let objects = rows(db, objectsQuery).map { Object(type: $0[0] ?? "", name: $0[1] ?? "", table: $0[2] ?? "", sql: $0[3]) }
        var columns: [String: [String]] = [:]
        for table in objects where table.type == "table" {
            columns[table.name] = rows(db, "PRAGMA table_info(\(table.name))").map { $0[1] ?? "" }
        }
        return FrozenSchema(objects: objects, columns: columns)
    }

    /// What the schema table holds, but SQLite's and GRDB's own objects.
    static let objectsQuery = """
        SELECT type, name, tbl_name, sql FROM sqlite_master
        WHERE tbl_name <> 'grdb_migrations' AND name NOT LIKE 'sqlite_stat%'
        ORDER BY type, name
        """

    static func objects(in db: Database) throws -> [Object] {
        try Row.fetchAll(db, sql: objectsQuery).map { Object(type: $0[0], name: $0[1], table: $0[2], sql: $0[3]) }
    }

    /// Every row of `query`, each column as text (nil for NULL).
    private static func rows(_ db: OpaquePointer, _ query: String) -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, query, -1, &statement, nil) == SQLITE_OK else { fatalError(String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append((0..<sqlite3_column_count(statement)).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
        }
        return result
    }
}
