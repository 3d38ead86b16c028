import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct DeleteTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    @Test func deleteRemovesEveryMatch() throws {
        for account in ["a", "b", "c"] {
            _ = try store.add(genericPassword(account: account, service: "s"), caller: caller)
        }
        _ = try store.add(genericPassword(account: "keep", service: "other"), caller: caller)
        try store.delete(genericPassword(service: "s"), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(service: "s"), caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "keep"), caller: caller) } == OSStatusCode.success)
    }

    @Test func matchLimitAllIsAcceptedOnDelete() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        _ = try store.add(genericPassword(account: "b"), caller: caller)
        try store.delete(genericPassword(["m_Limit": .string("m_LimitAll")]), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(), caller: caller) } == OSStatusCode.itemNotFound)
        // A finite limit is errSecMatchLimitUnsupported, which is errSecParam; nothing is deleted.
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        #expect(osStatus { try store.delete(genericPassword(["m_Limit": .string("m_LimitOne")]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.delete(genericPassword(["m_Limit": .number(3)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.delete(genericPassword(["m_CaseInsensitive": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a"), caller: caller) } == OSStatusCode.success)
    }

    @Test func noMatchIsItemNotFound() {
        #expect(osStatus { try store.delete(genericPassword(account: "nobody"), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func returnKeysOnDeleteAreParamErrors() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        #expect(osStatus { try store.delete(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a"), caller: caller) } == OSStatusCode.success, "nothing was deleted")
    }

    @Test func deletedItemCanBeAddedAgain() throws {
        _ = try store.add(genericPassword(account: "a", ["v_Data": .utf8("1")]), caller: caller)
        try store.delete(genericPassword(account: "a"), caller: caller)
        _ = try store.add(genericPassword(account: "a", ["v_Data": .utf8("2")]), caller: caller)
        #expect(try store.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: caller) == .utf8("2"))
    }
}

@Suite struct SynchronizableTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func accounts(_ query: [String: KeychainValue]) throws -> [String] {
        let result = try store.copyMatching(query.merging(["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]) { $1 }, caller: caller)
        return result?.array?.compactMap { $0.dictionary?["acct"]?.stringValue } ?? []
    }

    @Test func queriesWithoutSyncSeeOnlyNonSynchronizableItems() throws {
        _ = try store.add(genericPassword(account: "local"), caller: caller)
        _ = try store.add(genericPassword(account: "synced", ["sync": .bool(true)]), caller: caller)
        #expect(try accounts(genericPassword()) == ["local"])
        #expect(try accounts(genericPassword(["sync": .bool(true)])) == ["synced"])
        #expect(try accounts(genericPassword(["sync": .bool(false)])) == ["local"])
        #expect(try accounts(genericPassword(["sync": .string("syna")])) == ["local", "synced"])
        #expect(try accounts(genericPassword(["sync": .number(1)])) == ["synced"], "a CFNumber works as a boolean")
    }

    @Test func synchronizableAnyIsNotAValueToAdd() {
        #expect(osStatus { try store.add(genericPassword(account: "x", ["sync": .string("syna")]), caller: caller) } == OSStatusCode.param)
    }

    @Test func deletingASynchronizableItemLeavesATombstone() throws {
        _ = try store.add(genericPassword(account: "s", service: "svc", ["sync": .bool(true), "v_Data": .utf8("pw"), "labl": .string("L")]), caller: caller)
        let reference = try store.copyMatching(genericPassword(account: "s", ["sync": .bool(true), "r_PersistentRef": .bool(true)]), caller: caller)
        try store.delete(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)

        #expect(osStatus { try store.copyMatching(genericPassword(account: "s", ["sync": .string("syna")]), caller: caller) } == OSStatusCode.itemNotFound,
                "queries never see tombstones unless they ask")
        let tomb = try #require(try store.copyMatching(
            genericPassword(account: "s", ["sync": .bool(true), "tomb": .bool(true), "r_Attributes": .bool(true), "r_PersistentRef": .bool(true), "r_Data": .bool(true)]),
            caller: caller)?.dictionary)
        #expect(tomb["tomb"] == .bool(true))
        #expect(tomb["acct"] == .string("s"))
        #expect(tomb["svce"] == .string("svc"), "the primary key is kept")
        #expect(tomb["labl"] == nil, "other attributes are not")
        #expect(tomb["v_Data"] == nil, "nor the secret")
        #expect(tomb["v_PersistentRef"] != nil && tomb["v_PersistentRef"] != reference, "a tombstone gets a new persistent ref")
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": reference!], caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func addingOverATombstoneReplacesIt() throws {
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        try store.delete(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true), "v_Data": .utf8("again")]), caller: caller)
        #expect(try store.copyMatching(genericPassword(account: "s", ["sync": .bool(true), "r_Data": .bool(true)]), caller: caller) == .utf8("again"))
        #expect(osStatus { try store.copyMatching(genericPassword(account: "s", ["sync": .bool(true), "tomb": .bool(true)]), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func useTombstonesFalseDeletesOutright() throws {
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        try store.delete(genericPassword(account: "s", ["sync": .bool(true), "u_Tomb": .bool(false)]), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "s", ["sync": .bool(true), "tomb": .bool(true)]), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func nonSynchronizableItemsLeaveNoTombstone() throws {
        _ = try store.add(genericPassword(account: "l"), caller: caller)
        try store.delete(genericPassword(account: "l"), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "l", ["tomb": .bool(true), "sync": .string("syna")]), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func rekeyingASynchronizableItemLeavesATombstoneAtTheOldKey() throws {
        _ = try store.add(genericPassword(account: "old", ["sync": .bool(true)]), caller: caller)
        try store.update(genericPassword(account: "old", ["sync": .bool(true)]), attributes: ["acct": .string("new")], caller: caller)
        #expect(try accounts(genericPassword(["sync": .bool(true)])) == ["new"])
        #expect(try accounts(genericPassword(["sync": .bool(true), "tomb": .bool(true)])) == ["old"])
    }
}
