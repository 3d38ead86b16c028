import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct UpdateTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func attributes(_ query: [String: KeychainValue]) throws -> [String: KeychainValue] {
        try #require(try store.copyMatching(query.merging(["r_Attributes": .bool(true)]) { $1 }, caller: caller)?.dictionary)
    }

    @Test func updateChangesAttributesAndDataAndBumpsMdat() throws {
        _ = try store.add(genericPassword(account: "a", service: "s", ["v_Data": .utf8("old")]), caller: caller)
        let before = try attributes(genericPassword(account: "a"))
        try store.update(genericPassword(account: "a"), attributes: ["labl": .string("new label"), "v_Data": .utf8("new")], caller: caller)
        let after = try attributes(genericPassword(account: "a"))
        #expect(after["labl"] == .string("new label"))
        #expect(after["cdat"] == before["cdat"])
        guard case .date(let oldM)? = before["mdat"], case .date(let newM)? = after["mdat"] else {
            Issue.record("mdat missing")
            return
        }
        #expect(newM > oldM)
        #expect(try store.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: caller) == .utf8("new"))
    }

    @Test func updateEveryMatch() throws {
        for account in ["a", "b", "c"] {
            _ = try store.add(genericPassword(account: account, service: "s"), caller: caller)
        }
        try store.update(genericPassword(service: "s"), attributes: ["icmt": .string("seen")], caller: caller)
        let comments = try store.copyMatching(genericPassword(["icmt": .string("seen"), "m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true)]), caller: caller)?.array
        #expect(comments?.count == 3)
    }

    @Test func updateToAnotherLiveItemsKeyIsADuplicateAndChangesNothing() throws {
        _ = try store.add(genericPassword(account: "a", service: "s", ["v_Data": .utf8("A")]), caller: caller)
        _ = try store.add(genericPassword(account: "b", service: "s", ["v_Data": .utf8("B")]), caller: caller)
        #expect(osStatus { try store.update(genericPassword(account: "b"), attributes: ["acct": .string("a")], caller: caller) } == OSStatusCode.duplicateItem)
        #expect(try store.copyMatching(genericPassword(account: "b", ["r_Data": .bool(true)]), caller: caller) == .utf8("B"))
        #expect(try store.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: caller) == .utf8("A"))
        // Two matches updated onto one key collide with each other: the transaction rolls back.
        #expect(osStatus { try store.update(genericPassword(service: "s"), attributes: ["acct": .string("same")], caller: caller) } == OSStatusCode.duplicateItem)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "same"), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func updateKeepingItsOwnKeyIsNotADuplicate() throws {
        _ = try store.add(genericPassword(account: "a", service: "s"), caller: caller)
        try store.update(genericPassword(account: "a"), attributes: ["acct": .string("a"), "svce": .string("s"), "labl": .string("kept")], caller: caller)
        // The one item, updated in place: not a duplicate, not a second item.
        let found = try store.copyMatching(genericPassword(account: "a", ["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)
        guard case .array(let items)? = found else {
            Issue.record("expected a list, got \(String(describing: found))")
            return
        }
        #expect(items.count == 1)
        #expect(items.first?.dictionary?["labl"] == .string("kept"))
        #expect(items.first?.dictionary?["svce"] == .string("s"))
    }

    @Test func noMatchIsItemNotFound() {
        #expect(osStatus { try store.update(genericPassword(account: "nobody"), attributes: ["labl": .string("x")], caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func returnAndMatchKeysInAnUpdateQueryAreParamErrors() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        for extra in [["r_Data": KeychainValue.bool(true)], ["r_Attributes": .bool(true)], ["r_PersistentRef": .bool(true)],
                      ["m_Limit": .string("m_LimitAll")], ["m_Limit": .string("m_LimitOne")]] {
            #expect(osStatus { try store.update(genericPassword(account: "a", extra), attributes: ["labl": .string("x")], caller: caller) } == OSStatusCode.param)
        }
    }

    @Test func badAttributesToUpdate() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        let q = genericPassword(account: "a")
        #expect(osStatus { try store.update(q, attributes: ["v_Data": .string("not data")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: ["v_Data": .number(1)], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: ["class": .string("inet")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: [:], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: ["acct": .number(3)], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: ["cdat": .date(Date())], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.update(q, attributes: ["bogus": .string("x")], caller: caller) } == OSStatusCode.noSuchAttr)
        #expect(osStatus { try store.update(q, attributes: ["agrp": .string("not.mine")], caller: caller) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try store.update(q, attributes: ["pdmn": .string("zz")], caller: caller) } == OSStatusCode.param)
    }

    @Test func changingProtectionAndGroupReencrypts() throws {
        _ = try store.add(genericPassword(account: "a", ["v_Data": .utf8("pw")]), caller: caller)
        try store.update(genericPassword(account: "a"), attributes: ["pdmn": .string("cku"), "agrp": .string("test.shared")], caller: caller)
        let found = try store.copyMatching(genericPassword(account: "a", ["r_Attributes": .bool(true), "r_Data": .bool(true)]), caller: caller)?.dictionary
        #expect(found?["pdmn"] == .string("cku"))
        #expect(found?["agrp"] == .string("test.shared"))
        #expect(found?["v_Data"] == .utf8("pw"))
    }
}
