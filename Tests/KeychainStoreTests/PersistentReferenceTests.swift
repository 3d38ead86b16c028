import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct PersistentReferenceTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func reference(_ account: String) throws -> KeychainValue {
        try #require(try store.copyMatching(genericPassword(account: account, ["r_PersistentRef": .bool(true)]), caller: caller))
    }

    @Test func referenceFindsExactlyItsItemAndIsStable() throws {
        _ = try store.add(genericPassword(account: "a", ["v_Data": .utf8("A")]), caller: caller)
        _ = try store.add(genericPassword(account: "b", ["v_Data": .utf8("B")]), caller: caller)
        let a = try reference("a")
        let b = try reference("b")
        #expect(a != b)
        #expect(try store.copyMatching(["v_PersistentRef": b, "r_Data": .bool(true)], caller: caller) == .utf8("B"))
        #expect(try store.copyMatching(["class": .string("genp"), "v_PersistentRef": a, "r_Data": .bool(true)], caller: caller) == .utf8("A"))
        try store.update(["v_PersistentRef": a], attributes: ["labl": .string("changed"), "v_Data": .utf8("A2")], caller: caller)
        #expect(try reference("a") == a, "an update keeps the reference")
        #expect(try store.copyMatching(["v_PersistentRef": a, "r_Data": .bool(true)], caller: caller) == .utf8("A2"))
        try store.delete(["v_PersistentRef": a], caller: caller)
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": a], caller: caller) } == OSStatusCode.itemNotFound)
        #expect(try store.copyMatching(["v_PersistentRef": b, "r_Data": .bool(true)], caller: caller) == .utf8("B"))
    }

    @Test func referenceCannotBeCombinedWithAttributes() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        let a = try reference("a")
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": a, "acct": .string("a")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": a, "agrp": .string("test.group")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.delete(["v_PersistentRef": a, "svce": .string("")], caller: caller) } == OSStatusCode.param)
    }

    /// A reference to a synchronizable item reaches it only with kSecAttrSynchronizable
    /// (true or Any) beside it — the one attribute a reference may carry — as any query that
    /// does not say reaches local items only.
    @Test func aSynchronizableItemsReferenceNeedsTheSyncFlag() throws {
        _ = try store.add(genericPassword(account: "a", ["sync": .bool(true), "v_Data": .utf8("S")]), caller: caller)
        let synced = try #require(try store.copyMatching(genericPassword(account: "a", ["sync": .bool(true), "r_PersistentRef": .bool(true)]), caller: caller))
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": synced], caller: caller) } == OSStatusCode.itemNotFound)
        #expect(try store.copyMatching(["v_PersistentRef": synced, "sync": .bool(true), "r_Data": .bool(true)], caller: caller) == .utf8("S"))
        #expect(try store.copyMatching(["v_PersistentRef": synced, "sync": .string("syna"), "r_Data": .bool(true)], caller: caller) == .utf8("S"))
        try store.update(["v_PersistentRef": synced, "sync": .string("syna")], attributes: ["v_Data": .utf8("S2")], caller: caller)
        #expect(try store.copyMatching(genericPassword(account: "a", ["sync": .bool(true), "r_Data": .bool(true)]), caller: caller) == .utf8("S2"))
        try store.delete(["v_PersistentRef": synced, "sync": .bool(true)], caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a", ["sync": .bool(true)]), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func malformedReferences() throws {
        _ = try store.add(genericPassword(account: "a"), caller: caller)
        let a = try reference("a")
        guard case .data(let bytes) = a else { return }
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": .data(bytes.prefix(10))], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": .string("genp")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": .data(Data("xxxx".utf8) + bytes.dropFirst(4))], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(["class": .string("inet"), "v_PersistentRef": a], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.add(["class": .string("genp"), "v_PersistentRef": a], caller: caller) } == OSStatusCode.param)
        // A well-formed reference to a UUID that was never stored.
        #expect(osStatus { try store.copyMatching(["v_PersistentRef": .data(bytes.prefix(4) + Data(repeating: 7, count: 16))], caller: caller) } == OSStatusCode.itemNotFound)
    }
}
