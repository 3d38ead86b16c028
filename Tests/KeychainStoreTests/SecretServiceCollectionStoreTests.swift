import FoundationEssentials
import EnclaveBackend
import GRDB
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

/// The Secret Service's collections in the store: a created collection is an access group of
/// its own, and deleting it reaches nothing else; labels and aliases are each owner's; a
/// keychain written before collections existed opens with its items in the login collection.
@Suite struct SecretServiceCollectionStoreTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }
    let host = "org.freedesktop.secrets.host"
    let app = "org.freedesktop.secrets.flatpak.org.example.App"

    func create(_ label: String, in group: String) throws {
        _ = try store.createSecretServiceItem(
            in: .test([group]), label: label, attributes: ["k": "v"], secret: SecretBytes(Array(label.utf8)), contentType: "text/plain", replace: false)
    }

    func labels(in group: String) throws -> [String] {
        try store.secretServiceItems(in: .test([group]), matching: [:]).map(\.label).sorted()
    }

    @Test func deletingACollectionDeletesExactlyItsItems() throws {
        let scratch = try store.createSecretServiceCollection(owner: .test(host), label: "Scratch")
        let scratchB = try store.createSecretServiceCollection(owner: .test(host), label: "Scratch")
        #expect(scratch.name == "Scratch" && scratchB.name == "Scratch_2")
        let theirs = try store.createSecretServiceCollection(owner: .test(app), label: "Scratch")
        #expect(theirs.name == "Scratch", "names are per owner")
        try create("login item", in: host)
        try create("in scratch", in: SecretServiceCollection.itemGroup(owner: host, name: scratch.name))
        try create("in scratch_2", in: SecretServiceCollection.itemGroup(owner: host, name: scratchB.name))
        try create("app's scratch", in: SecretServiceCollection.itemGroup(owner: app, name: theirs.name))
        try store.setSecretServiceAlias(owner: .test(host), alias: "temp", name: scratch.name)
        try store.setSecretServiceAlias(owner: .test(host), alias: "other", name: scratchB.name)
        _ = try store.add(genericPassword(service: "through SecItem"), caller: keychain.caller)

        #expect(try store.deleteSecretServiceCollection(owner: .test(host), name: scratch.name) == 1)
        #expect(try labels(in: host) == ["login item"])
        #expect(try labels(in: SecretServiceCollection.itemGroup(owner: host, name: scratch.name)).isEmpty)
        #expect(try labels(in: SecretServiceCollection.itemGroup(owner: host, name: scratchB.name)) == ["in scratch_2"])
        #expect(try labels(in: SecretServiceCollection.itemGroup(owner: app, name: theirs.name)) == ["app's scratch"])
        #expect(try store.secretServiceCollections(owner: .test(host)).map(\.name) == ["Scratch_2"])
        #expect(try store.secretServiceAliases(owner: .test(host)) == ["other": "Scratch_2"])
        #expect(osStatus { try store.copyMatching(genericPassword(service: "through SecItem"), caller: keychain.caller) } == OSStatusCode.success)
    }

    @Test func listingAndDeletingACollectionUseItsIndex() throws {
        for i in 0..<20 { try create("item \(i)", in: i % 2 == 0 ? host : SecretServiceCollection.itemGroup(owner: host, name: "work")) }
        let plans = try store.secretServiceCollectionPlans(owner: .test(host))
        #expect(plans.count == 2 && plans.allSatisfy { $0.contains("USING COVERING INDEX genp_collection_agrp") || $0.contains("USING INDEX genp_collection_agrp") }, "\(plans)")
    }

    @Test func labelsAndNamesFollowTheLabel() throws {
        // As gnome-keyring names them (its label; "unnamed"), in an object path's characters.
        #expect(SecretServiceCollection.name(forLabel: "My Keys — 2026!", taken: []) == "My_Keys___2026_")
        #expect(SecretServiceCollection.name(forLabel: "", taken: []) == "unnamed")
        #expect(SecretServiceCollection.name(forLabel: "Test", taken: ["Test"]) == "Test_2")
        #expect(SecretServiceCollection.name(forLabel: "login", taken: []) == "login_2", "the reserved names are never taken")
        #expect(SecretServiceCollection.name(forLabel: "session", taken: []) == "session_2")
        #expect(SecretServiceCollection.isValidName(SecretServiceCollection.name(forLabel: String(repeating: "é", count: 100), taken: [])))
        try store.setSecretServiceCollectionLabel(owner: .test(host), name: "login", label: "Everyday", created: Date(timeIntervalSince1970: 5))
        try store.setSecretServiceCollectionLabel(owner: .test(host), name: "login", label: "Renamed", created: Date(timeIntervalSince1970: 9))
        let rows = try store.secretServiceCollections(owner: .test(host))
        #expect(rows.map(\.label) == ["Renamed"] && rows[0].created == Date(timeIntervalSince1970: 5))
        #expect(try store.secretServiceCollections(owner: .test(app)).isEmpty)
    }

    /// A collection's access group holding items with no row of its own (a backup restored
    /// elsewhere) is still a collection: its items are never out of every caller's reach.
    @Test func itemsWithoutTheirCollectionsRowAreACollection() throws {
        try create("restored", in: SecretServiceCollection.itemGroup(owner: host, name: "old_work"))
        try create("not a collection", in: host + "x/collection/y")
        let found = try store.secretServiceCollections(owner: .test(host))
        #expect(found.map(\.name) == ["old_work"] && found[0].label == "old_work")
    }

    /// A keychain of schema v3 — everything before collections — opens: the migration adds
    /// the tables, and its Secret Service items are where they were.
    @Test func aKeychainFromBeforeCollectionsOpensWithItsItems() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(home) }
        let keybag = try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home))
        do {
            let store = try KeychainStore(directory: home, keybag: keybag)
            _ = try store.createSecretServiceItem(
                in: .test([host]), label: "from v3", attributes: ["k": "v"], secret: SecretBytes(Array("old".utf8)), contentType: "text/plain", replace: false)
        }
        // Back to v3 as an earlier version left it: no collection tables, no group index.
        let queue = try DatabaseQueue(path: home + "/" + KeychainStore.databaseFileName)
        try queue.write { db in
            try db.execute(sql: "DROP TABLE secret_collection; DROP TABLE secret_alias; DROP INDEX genp_collection_agrp")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v4 secret service collections'")
        }
        try queue.close()

        let reopened = try KeychainStore(directory: home, keybag: keybag)
        let items = try reopened.secretServiceItems(in: .test([host]), matching: ["k": "v"])
        #expect(items.map(\.label) == ["from v3"])
        #expect(try reopened.secretServiceSecret(id: items[0].id, in: .test([host])).0.withUnsafeBytes { Array($0) } == Array("old".utf8))
        #expect(try reopened.createSecretServiceCollection(owner: .test(host), label: "New").name == "New")
    }
}
