import FoundationEssentials
import EnclaveBackend
import GRDB
import KeychainModel
@testable import KeychainStore
import KeychainTestSupport
import Testing

/// The schema is what its literal migrations make, never what today's attribute catalogue
/// would make: keychains written by earlier versions (SecurityToolTests' fixtures) open.
@Suite struct FrozenSchemaTests {
    /// Every attribute the catalogue indexes has its token column. When this fails, an
    /// attribute became indexed: its column needs a new migration (ALTER TABLE … ADD COLUMN,
    /// never an edit of v1); until then it is matched on decrypted attributes and every
    /// existing keychain still opens.
    @Test func everyIndexedAttributeHasATokenColumnFromAMigration() {
        for itemClass in ItemClass.stored {
            let table = ItemTable.of(itemClass)
            let indexed = ItemSchema.of(itemClass).attributes.filter { $0.isIndexed && $0.name != ItemSchema.Name.accessGroup }
            #expect(table.tokenAttributes.map(\.name) == indexed.map(\.name), "\(itemClass): add a migration for the new token column")
        }
    }

    /// The schema securityd checks every keychain against is the migrations' own. When this
    /// fails, a migration was added: the message names the file to copy over
    /// FrozenSchema+Pinned.swift.
    @Test func thePinnedSchemaIsWhatTheMigrationsMake() throws {
        let made = FrozenSchema.made()
        if made != FrozenSchema.pinned {
            let path = try TemporaryKeychain.makeTemporaryDirectory() + "/FrozenSchema+Pinned.swift"
            try Data(Self.pinnedSource(made).utf8).write(to: URL(fileURLWithPath: path))
            Issue.record("the pinned schema is not what the migrations make: copy \(path) to Sources/KeychainStore/FrozenSchema+Pinned.swift")
        }
    }

    /// FrozenSchema+Pinned.swift for `schema`.
    static func pinnedSource(_ schema: FrozenSchema) -> String {
        func literal(_ text: String) -> String {
            var escaped = ""
            for character in text.unicodeScalars {
                switch character {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "\n": escaped += "\\n"
                case _ where character.value < 0x20 || character.value == 0x7F:
                    escaped += "\\u{" + String(character.value, radix: 16) + "}"
                default: escaped.unicodeScalars.append(character)
                }
            }
            return "\"" + escaped + "\""
        }
        var lines = [
            "// Written by FrozenSchemaTests.thePinnedSchemaIsWhatTheMigrationsMake from StoreSchema.migrations:",
            "// do not edit; add a migration and copy the file that test writes.",
            "extension FrozenSchema {",
            "    /// What ``made()`` returns: the schema every keychain of this version has.",
            "    static let pinned = FrozenSchema(",
            "        objects: [",
        ]
        for object in schema.objects {
            lines.append("            Object(type: \(literal(object.type)), name: \(literal(object.name)), table: \(literal(object.table)), sql: \(object.sql.map(literal) ?? "nil")),")
        }
        lines.append("        ],")
        lines.append("        columns: [")
        for table in schema.columns.keys.sorted() {
            lines.append("            \(literal(table)): [\(schema.columns[table]!.map(literal).joined(separator: ", "))],")
        }
        lines += ["        ]", "    )", "}", ""]
        return lines.joined(separator: "\n")
    }

    @Test func theMigrationsMakeTheTablesTheStoreReads() {
        let columns = FrozenSchema.current.columns
        #expect(columns["genp"]?.prefix(7) == ["rowid", "uuid", "agrp", "pdmn", "sync", "tomb", "pk"])
        #expect(columns["genp"]?.suffix(2) == ["meta", "secret"])
        #expect(Set(columns.keys) == [
            "genp", "inet", "cert", "keys", "genp_attribute", "secret_collection", "secret_alias",
            "sync_account", "sync_membership", "sync_zones", "sync_keys", "sync_mirror", "sync_outgoing", "sync_incoming", "sync_history",
            "sync_view", "sync_heads", "sync_alarms",
        ])
    }

    /// A keychain a newer Trousseau migrated further is refused by name, and left as it was
    /// (not "damaged", not migrated back).
    @Test func aKeychainOfANewerVersionIsRefusedAndLeftAlone() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(home) }
        let keybag = try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home))
        _ = try KeychainStore(directory: home, keybag: keybag)
        let path = home + "/" + KeychainStore.databaseFileName
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE future_feature (id TEXT PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99 from the future')")
        }
        try queue.close()

        do {
            _ = try KeychainStore(directory: home, keybag: keybag)
            Issue.record("a newer keychain opened")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.invalidKeychain && error.message.contains("newer version"), "\(error)")
        }
        let after = try DatabaseQueue(path: path)
        #expect(try after.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }.last == "v99 from the future")
        #expect(try after.read { try $0.tableExists("future_feature") })
    }

    /// An index a newer version would never make, or one dropped by damage, is refused as
    /// damaged: the check covers every object of the schema, not only the item tables' columns.
    @Test func aMissingIndexIsRefusedAsDamaged() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(home) }
        let keybag = try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home))
        _ = try KeychainStore(directory: home, keybag: keybag)
        let queue = try DatabaseQueue(path: home + "/" + KeychainStore.databaseFileName)
        try queue.write { try $0.execute(sql: "DROP INDEX genp_t_acct_t_svce") }
        try queue.close()
        #expect {
            _ = try KeychainStore(directory: home, keybag: keybag)
        } throws: { error in
            (error as? KeychainError)?.status == OSStatusCode.decode && (error as? KeychainError)?.message.contains("genp") == true
        }
    }
}
