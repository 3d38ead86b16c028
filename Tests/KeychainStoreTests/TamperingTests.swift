import FoundationEssentials
import GRDB
import KeychainModel
import KeychainStore
import EnclaveBackend
import KeychainTestSupport
import Testing

/// Edits the database behind the store's back, as an attacker with the file would.
@Suite struct TamperingTests: KeychainSuite {
    let keychain: TemporaryKeychain
    let raw: DatabaseQueue
    init() throws {
        keychain = try TemporaryKeychain()
        raw = try DatabaseQueue(path: keychain.databaseFiles[0])
        for account in ["a", "b", "c", "d", "e"] {
            _ = try keychain.store.add(genericPassword(account: account, service: "s", ["v_Data": .utf8("secret of \(account)")]), caller: keychain.caller)
        }
    }

    /// A damaged byte in the schema's SQL text (found by the reliability suite's bit flips)
    /// renamed a column, and every call then failed with errSecIO "no such column": the
    /// store now refuses to open a file whose tables lack their columns, as damaged.
    @Test func aDamagedSchemaIsRefusedAsDamaged() throws {
        try raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_schema SET sql = replace(sql, 'secret BLOB', 'secrex BLOB') WHERE name = 'genp'")
            try db.execute(sql: "PRAGMA writable_schema = OFF")
        }
        #expect(throws: KeychainError.self) {
            do {
                _ = try KeychainStore(directory: keychain.home, keybag: SoftwareKeybag(directory: keychain.home, deviceKey: FileDeviceKey(directory: keychain.home)))
            } catch let error as KeychainError {
                #expect(error.status == OSStatusCode.decode && error.message.contains("genp"), "\(error)")
                throw error
            }
        }
    }

    func dataStatus(_ account: String) -> OSStatusCode {
        osStatus { try store.copyMatching(genericPassword(account: account, ["r_Data": .bool(true)]), caller: caller) }
    }

    func rowID(_ account: String) throws -> Int64 {
        guard case .data(let ref)? = try store.copyMatching(genericPassword(account: account, ["r_PersistentRef": .bool(true)]), caller: caller) else {
            throw KeychainError.itemNotFound
        }
        return try raw.read { db in
            try Int64.fetchOne(db, sql: "SELECT rowid FROM genp WHERE uuid = ?", arguments: [ref.dropFirst(4)])!
        }
    }

    @Test func swappedSecretBlobsAndAnEditedGroupReadAsDecodeForExactlyThoseRows() throws {
        let (a, b, c) = (try rowID("a"), try rowID("b"), try rowID("c"))
        try raw.write { db in
            let secretA = try Data.fetchOne(db, sql: "SELECT secret FROM genp WHERE rowid = ?", arguments: [a])!
            let secretB = try Data.fetchOne(db, sql: "SELECT secret FROM genp WHERE rowid = ?", arguments: [b])!
            try db.execute(sql: "UPDATE genp SET secret = ? WHERE rowid = ?", arguments: [secretB, a])
            try db.execute(sql: "UPDATE genp SET secret = ? WHERE rowid = ?", arguments: [secretA, b])
            // Move c into the caller's other group: its blobs no longer authenticate.
            try db.execute(sql: "UPDATE genp SET agrp = 'test.shared' WHERE rowid = ?", arguments: [c])
        }
        #expect(dataStatus("a") == OSStatusCode.decode)
        #expect(dataStatus("b") == OSStatusCode.decode)
        #expect(dataStatus("c") == OSStatusCode.decode)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "c", ["r_Attributes": .bool(true)]), caller: caller) } == OSStatusCode.decode)
        #expect(try store.copyMatching(genericPassword(account: "d", ["r_Data": .bool(true)]), caller: caller) == .utf8("secret of d"))
        #expect(try store.copyMatching(genericPassword(account: "e", ["r_Data": .bool(true)]), caller: caller) == .utf8("secret of e"))
        // Swapped secrets leave the attributes readable.
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a", ["r_Attributes": .bool(true)]), caller: caller) } == OSStatusCode.success)
        // A query over everything returns the readable items and never another row's secret.
        let all = try store.copyMatching(genericPassword(service: "s", ["r_Data": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)
        #expect(all == .array([.utf8("secret of d"), .utf8("secret of e")]))
    }

    @Test func swappedMetadataBlobsAreDetected() throws {
        let (a, b) = (try rowID("a"), try rowID("b"))
        try raw.write { db in
            let metaA = try Data.fetchOne(db, sql: "SELECT meta FROM genp WHERE rowid = ?", arguments: [a])!
            let metaB = try Data.fetchOne(db, sql: "SELECT meta FROM genp WHERE rowid = ?", arguments: [b])!
            try db.execute(sql: "UPDATE genp SET meta = ? WHERE rowid = ?", arguments: [metaB, a])
            try db.execute(sql: "UPDATE genp SET meta = ? WHERE rowid = ?", arguments: [metaA, b])
        }
        // Tokens still point at the rows, but neither decrypts: never the other's attributes.
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a", ["r_Attributes": .bool(true)]), caller: caller) } == OSStatusCode.decode)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "b", ["r_Attributes": .bool(true)]), caller: caller) } == OSStatusCode.decode)
        #expect(dataStatus("c") == OSStatusCode.success)
    }

    @Test func editedPlaintextColumnsAndTruncatedBlobs() throws {
        let (a, b, c, d) = (try rowID("a"), try rowID("b"), try rowID("c"), try rowID("d"))
        try raw.write { db in
            try db.execute(sql: "UPDATE genp SET pdmn = 'dk' WHERE rowid = ?", arguments: [a])
            try db.execute(sql: "UPDATE genp SET meta = substr(meta, 1, 20) WHERE rowid = ?", arguments: [b])
            try db.execute(sql: "UPDATE genp SET secret = substr(secret, 1, 30) WHERE rowid = ?", arguments: [c])
            try db.execute(sql: "UPDATE genp SET pdmn = 'bogus' WHERE rowid = ?", arguments: [d])
        }
        #expect(dataStatus("a") == OSStatusCode.decode)
        #expect(dataStatus("b") == OSStatusCode.decode)
        #expect(dataStatus("c") == OSStatusCode.decode)
        #expect(dataStatus("d") == OSStatusCode.decode)
        #expect(dataStatus("e") == OSStatusCode.success)
    }

    /// Columns holding another storage class than the store writes (text or an integer where
    /// it writes a blob) read as errSecDecode for those rows only, and the rest are served.
    /// (Finds read the columns themselves since issue 36; GRDB converted such values as
    /// SQLite does, and the blobs then failed authentication: the same outcome, held here.)
    @Test func columnsOfAnotherStorageClassReadAsDecode() throws {
        let (a, b, c, d) = (try rowID("a"), try rowID("b"), try rowID("c"), try rowID("d"))
        try raw.write { db in
            try db.execute(sql: "UPDATE genp SET pk = hex(pk) WHERE rowid = ?", arguments: [a])
            try db.execute(sql: "UPDATE genp SET uuid = hex(uuid) WHERE rowid = ?", arguments: [b])
            try db.execute(sql: "UPDATE genp SET secret = 'plain text' WHERE rowid = ?", arguments: [c])
            try db.execute(sql: "UPDATE genp SET meta = 42 WHERE rowid = ?", arguments: [d])
        }
        for account in ["a", "b", "c", "d"] {
            #expect(dataStatus(account) == OSStatusCode.decode, "\(account)")
        }
        #expect(dataStatus("e") == OSStatusCode.success)
        let all = try store.copyMatching(genericPassword(service: "s", ["r_Data": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)
        #expect(all == .array([.utf8("secret of e")]))
    }

    /// The same through the Secret Service's search, which read its rows through GRDB's
    /// fetched rows: their typed subscripts trapped on the integer, taking securityd down.
    @Test func aSecretServiceSearchLeavesOutARowOfAnotherStorageClass() throws {
        let group = "test.secret-service"
        for label in ["kept", "damaged"] {
            _ = try store.createSecretServiceItem(
                in: .test([group]), label: label, attributes: ["k": "v"], secret: SecretBytes(Array(label.utf8)),
                contentType: "text/plain", replace: false)
        }
        try raw.write { db in
            try db.execute(sql: "UPDATE genp SET meta = 42 WHERE rowid = (SELECT max(rowid) FROM genp WHERE agrp = ?)", arguments: [group])
        }
        #expect(try store.secretServiceItems(in: .test([group]), matching: ["k": "v"]).map(\.label) == ["kept"])
        #expect(try store.secretServiceItemIDs(in: .test([group]), matching: [:]).count == 1)
    }

    @Test func damagedItemsDoNotStopWritesToOthers() throws {
        let a = try rowID("a")
        try raw.write { db in
            try db.execute(sql: "UPDATE genp SET meta = zeroblob(60) WHERE rowid = ?", arguments: [a])
        }
        try store.update(genericPassword(service: "s"), attributes: ["labl": .string("touched")], caller: caller)
        try store.delete(genericPassword(account: "e"), caller: caller)
        #expect(dataStatus("a") == OSStatusCode.decode, "the damaged row is left as it was, not deleted")
        #expect(dataStatus("b") == OSStatusCode.success)
    }
}
