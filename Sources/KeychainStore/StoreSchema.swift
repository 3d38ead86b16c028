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
        return migrator
    }
}
