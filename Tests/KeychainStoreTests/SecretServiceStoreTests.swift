import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing
@testable import KeychainCallers

/// The store's Secret Service items: arbitrary attributes found through keyed tokens with an
/// index, one scope's items invisible to another's, nothing of them in plaintext on disk.
@Suite struct SecretServiceStoreTests {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }
    var store: KeychainStore { keychain.store }
    let scope = ["org.freedesktop.secrets.host"]

    @discardableResult
    func create(_ label: String, _ attributes: [String: String], _ secret: String, in group: String = "org.freedesktop.secrets.host", replace: Bool = false)
        throws -> SecretServiceItem
    {
        try store.createSecretServiceItem(
            in: .test([group]), label: label, attributes: attributes, secret: SecretBytes(Array(secret.utf8)), contentType: "text/plain", replace: replace
        ).0
    }

    @Test func searchesMatchEveryAttributeGivenAndNothingElse() throws {
        try create("one", ["service": "mail", "user": "alice"], "1")
        try create("two", ["service": "mail", "user": "bob"], "2")
        try create("three", ["service": "web", "user": "alice", "extra": "x"], "3")
        func labels(_ attributes: [String: String]) throws -> [String] {
            try store.secretServiceItems(in: .test(scope), matching: attributes).map(\.label)
        }
        #expect(try labels(["service": "mail"]) == ["one", "two"])
        #expect(try labels(["user": "alice"]) == ["one", "three"])
        #expect(try labels(["user": "alice", "service": "web"]) == ["three"])
        #expect(try labels(["user": "carol"]) == [])
        #expect(try labels(["user": "alice", "service": "nope"]) == [])
        #expect(try labels([:]) == ["one", "two", "three"])
        // A value that is another attribute's value is not a match (tokens bind name and value).
        #expect(try labels(["service": "alice"]) == [])
    }

    @Test func replaceOverwritesTheItemWithExactlyTheseAttributes() throws {
        let first = try create("first", ["a": "1", "b": "2"], "old")
        let replaced = try create("second", ["a": "1", "b": "2"], "new", replace: true)
        #expect(replaced.id == first.id)
        let (secret, item) = try store.secretServiceSecret(id: first.id, in: .test(scope))
        #expect(secret.isEqual(to: SecretBytes(Array("new".utf8))) && item.label == "second")
        // Same attributes plus one more is another item; replace=false always adds.
        let superset = try create("third", ["a": "1", "b": "2", "c": "3"], "x", replace: true)
        #expect(superset.id != first.id)
        let duplicate = try create("fourth", ["a": "1", "b": "2"], "y", replace: false)
        #expect(duplicate.id != first.id)
        #expect(try store.secretServiceItems(in: .test(scope), matching: ["a": "1"]).count == 3)
    }

    @Test func updatesMoveTheTokensWithTheAttributes() throws {
        let item = try create("label", ["k": "before"], "s")
        try store.updateSecretServiceItem(id: item.id, in: .test(scope), label: "renamed", attributes: ["k": "after"])
        #expect(try store.secretServiceItems(in: .test(scope), matching: ["k": "before"]).isEmpty)
        let found = try store.secretServiceItems(in: .test(scope), matching: ["k": "after"])
        #expect(found.map(\.label) == ["renamed"] && found[0].modified >= found[0].created)
        try store.deleteSecretServiceItem(id: item.id, in: .test(scope))
        #expect(try store.secretServiceItems(in: .test(scope), matching: [:]).isEmpty)
        #expect(throws: KeychainError.itemNotFound) { try store.deleteSecretServiceItem(id: item.id, in: .test(scope)) }
    }

    @Test func anotherScopesItemsAreMissing() throws {
        let theirs = try create("theirs", ["k": "v"], "s", in: "org.freedesktop.secrets.flatpak.org.example.App")
        #expect(try store.secretServiceItems(in: .test(scope), matching: ["k": "v"]).isEmpty)
        #expect(try store.secretServiceItem(id: theirs.id, in: .test(scope)) == nil)
        #expect(throws: KeychainError.itemNotFound) { try store.secretServiceSecret(id: theirs.id, in: .test(scope)) }
        #expect(throws: KeychainError.itemNotFound) { try store.updateSecretServiceItem(id: theirs.id, in: .test(scope), label: "mine") }
        #expect(throws: KeychainError.itemNotFound) { try store.deleteSecretServiceItem(id: theirs.id, in: .test(scope)) }
    }

    @Test func itemsStoredThroughSecItemAreNotSecretServiceItems() throws {
        // Even in the same group, with an id-shaped account: only items the Secret Service made carry its marker.
        _ = try store.add(
            ["class": .string("genp"), "acct": .string(String(repeating: "a", count: 32)), "agrp": .string(scope[0]), "v_Data": .utf8("x")],
            caller: AccessGroups(scope))
        #expect(try store.secretServiceItems(in: .test(scope), matching: [:]).isEmpty)
        #expect(try store.secretServiceItem(id: String(repeating: "a", count: 32), in: .test(scope)) == nil)
    }

    @Test func anAttributeSearchIsAnIndexLookup() throws {
        for i in 0..<50 { try create("item \(i)", ["n": "\(i)", "parity": "\(i % 2)"], "s") }
        let plan = try store.secretServiceQueryPlan(in: .test(scope), matching: ["n": "7", "parity": "1"]).joined(separator: "\n")
        #expect(plan.contains("genp_attribute USING PRIMARY KEY (token=?)") || plan.contains("genp_attribute USING COVERING INDEX"), "\(plan)")
        #expect(!plan.contains("SCAN genp_attribute"), "\(plan)")
        #expect(!plan.contains("SCAN genp"), "no walk over the items: \(plan)")
        // The collections' access-group index (schema v4) is never sought per row: the
        // attribute's list drives and each row is found by its rowid (as before v4).
        #expect(!plan.contains("agrp"), "\(plan)")
        #expect(plan.contains("SEARCH genp USING INTEGER PRIMARY KEY (rowid=?)"), "\(plan)")
    }

    /// An attribute every item shares, and the marker every Secret Service item carries, are
    /// probed per row, never built into a list: a lookup of one item among many reads one
    /// list of one item (before, each `IN (SELECT …)` list was built whole per statement).
    @Test func aSharedAttributeAndTheMarkerAreProbedNotListed() throws {
        for i in 0..<50 { try create("item \(i)", ["application": "the same", "n": "\(i)"], "s") }
        let search = try store.secretServiceQueryPlan(in: .test(scope), matching: ["application": "the same", "n": "7"])
        #expect(search.filter { $0.hasSuffix("USING PRIMARY KEY (token=?)") }.count == 1, "one list, the rarer attribute's: \(search)")
        #expect(search.contains { $0.hasSuffix("USING PRIMARY KEY (token=? AND item=?)") }, "the other probed: \(search)")
        let item = try #require(try store.secretServiceItems(in: .test(scope), matching: ["n": "7"]).first)
        let byPath = try store.secretServiceQueryPlan(in: .test(scope), matching: [:], id: item.id)
        #expect(byPath.contains { $0.contains("(uuid=?)") }, "the item's own row: \(byPath)")
        #expect(!byPath.contains { $0.hasSuffix("(token=?)") }, "no list of every item: \(byPath)")
        #expect(try store.secretServiceSecret(id: item.id, in: .test(scope)).1.attributes == ["application": "the same", "n": "7"])
    }

    @Test func attributesLabelsAndSecretsAreNotInPlaintextOnDisk() throws {
        try create("Distinctive Label 7c1", ["distinctive-name-3f2": "distinctive-value-9a8"], "distinctive-secret-5e4")
        for file in keychain.databaseFiles {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            for needle in ["Distinctive Label 7c1", "distinctive-name-3f2", "distinctive-value-9a8", "distinctive-secret-5e4"] {
                #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) in \(file)")
            }
        }
    }

    @Test func oversizedAttributesAreRefused() throws {
        #expect(throws: KeychainError.self) { try create("x", ["k": String(repeating: "v", count: 5000)], "s") }
        let many = Dictionary(uniqueKeysWithValues: (0..<300).map { ("k\($0)", "v") })
        #expect(throws: KeychainError.self) { try create("x", many, "s") }
    }
}
