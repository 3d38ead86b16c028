import GRDB
import KeychainModel

/// Schema changes, applied only through migrations.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 item tables") { db in
            for itemClass in ItemClass.stored {
                for statement in ItemTable.of(itemClass).creationSQL {
                    try db.execute(sql: statement)
                }
            }
        }
        migrator.registerMigration("v2 lookup pair indexes") { db in
            for itemClass in ItemClass.stored {
                for statement in ItemTable.of(itemClass).lookupIndexSQL {
                    try db.execute(sql: statement)
                }
            }
        }
        migrator.registerMigration("v3 secret service attribute tokens") { db in
            // One row per attribute of a Secret Service item (its keyed token), and the
            // marker every such item carries: equality searches on any attributes are index
            // lookups. Rows go with their item, whichever way it is deleted.
            try db.execute(sql: "CREATE TABLE genp_attribute (token INTEGER NOT NULL, item INTEGER NOT NULL, PRIMARY KEY (token, item)) WITHOUT ROWID")
            try db.execute(sql: "CREATE INDEX genp_attribute_item ON genp_attribute(item)")
            try db.execute(sql: "CREATE TRIGGER genp_attribute_delete AFTER DELETE ON genp BEGIN DELETE FROM genp_attribute WHERE item = old.rowid; END")
        }
        migrator.registerMigration("v4 secret service collections") { db in
            // The collections callers made (their items are in an access group of their own)
            // and the login collection's label once changed; each scope's aliases.
            try db.execute(sql: """
                CREATE TABLE secret_collection (owner TEXT NOT NULL, name TEXT NOT NULL, label TEXT NOT NULL,
                  created REAL NOT NULL, modified REAL NOT NULL, PRIMARY KEY (owner, name)) WITHOUT ROWID
                """)
            try db.execute(sql: """
                CREATE TABLE secret_alias (owner TEXT NOT NULL, alias TEXT NOT NULL, name TEXT NOT NULL,
                  PRIMARY KEY (owner, alias)) WITHOUT ROWID
                """)
            // A created collection's items are one access group: deleting or listing them is a
            // range of this index. Partial, so that no item query can use it: a search by tokens
            // would otherwise seek it before each row (SQLite preferred it to the rowid).
            try db.execute(sql: "CREATE INDEX genp_collection_agrp ON genp(agrp) WHERE \(collectionGroupTerm)")
        }
        return migrator
    }

    /// The condition of `genp_collection_agrp`: a query uses the index only when it says this
    /// term itself (SQLite's rule for partial indexes).
    static let collectionGroupTerm = "instr(agrp, '/collection/') > 0"

    /// Checks that every item table has the columns it was created with. The schema is
    /// stored in the database file as SQL text: a damaged byte there renames or retypes a
    /// column, and every statement would then fail with an SQL error.
    ///
    /// - Throws: `errSecDecode` naming the table when the file's schema differs.
    static func verify(_ db: Database) throws {
        for itemClass in ItemClass.stored {
            let table = ItemTable.of(itemClass)
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(table.name))").map { row -> String in
                "\(row["name"] as String? ?? "") \(row["type"] as String? ?? "")"
            }
            guard columns == table.expectedColumns else {
                throw KeychainError.decode("the keychain database is damaged: table \(table.name) does not have its columns")
            }
        }
    }
}
