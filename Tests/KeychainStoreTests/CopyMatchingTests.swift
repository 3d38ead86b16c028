import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct CopyMatchingTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func addThree() throws {
        for (account, secret) in [("c", "3"), ("a", "1"), ("b", "2")] {
            _ = try store.add(genericPassword(account: account, service: "svc", ["v_Data": .utf8(secret)]), caller: caller)
        }
    }

    @Test func defaultLimitIsOneAndReturnsASingleValue() throws {
        try addThree()
        let result = try store.copyMatching(genericPassword(service: "svc", ["r_Data": .bool(true)]), caller: caller)
        #expect(result == .utf8("3"), "the first match in insertion order, not an array")
    }

    @Test func limitAllReturnsAnArrayInInsertionOrder() throws {
        try addThree()
        let result = try store.copyMatching(genericPassword(service: "svc", ["r_Data": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)
        #expect(result == .array([.utf8("3"), .utf8("1"), .utf8("2")]))
        let accounts = try store.copyMatching(genericPassword(["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)?
            .array?.map { $0.dictionary?["acct"] }
        #expect(accounts == [.string("c"), .string("a"), .string("b")])
    }

    @Test func numericLimit() throws {
        try addThree()
        let result = try store.copyMatching(genericPassword(service: "svc", ["r_Data": .bool(true), "m_Limit": .number(2)]), caller: caller)
        #expect(result == .array([.utf8("3"), .utf8("1")]))
    }

    @Test func returnTypeCombinations() throws {
        _ = try store.add(genericPassword(account: "a", service: "s", ["v_Data": .utf8("pw"), "labl": .string("L")]), caller: caller)
        let q = genericPassword(account: "a", service: "s")
        #expect(try store.copyMatching(q, caller: caller) == nil, "no return key: an existence check")

        let attributes = try #require(try store.copyMatching(q.merging(["r_Attributes": .bool(true)]) { $1 }, caller: caller)?.dictionary)
        #expect(attributes["v_Data"] == nil, "attributes never contain v_Data unless data was asked for")
        #expect(attributes["labl"] == .string("L"))

        let both = try #require(try store.copyMatching(q.merging(["r_Attributes": .bool(true), "r_Data": .bool(true)]) { $1 }, caller: caller)?.dictionary)
        #expect(both["v_Data"] == .utf8("pw"))
        #expect(both["acct"] == .string("a"))

        guard case .data(let reference)? = try store.copyMatching(q.merging(["r_PersistentRef": .bool(true)]) { $1 }, caller: caller) else {
            Issue.record("r_PersistentRef alone returns data")
            return
        }
        #expect(reference.count == 20)
        #expect(reference.prefix(4) == Data("genp".utf8))

        let dataAndRef = try #require(try store.copyMatching(q.merging(["r_PersistentRef": .bool(true), "r_Data": .bool(true)]) { $1 }, caller: caller)?.dictionary)
        #expect(dataAndRef["v_Data"] == .utf8("pw"))
        #expect(dataAndRef["v_PersistentRef"] == .data(reference))
        #expect(dataAndRef["acct"] == nil)

        let asRef = try store.copyMatching(q.merging(["r_Ref": .bool(true)]) { $1 }, caller: caller)?.dictionary
        #expect(asRef?["acct"] == .string("a"), "a password has no ref type: r_Ref returns its attributes")
        #expect(asRef?["v_Data"] == nil)
    }

    @Test func itemWithoutDataReturnsEmptyDataOrNoKey() throws {
        _ = try store.add(genericPassword(account: "nodata"), caller: caller)
        _ = try store.add(genericPassword(account: "empty", ["v_Data": .data(Data())]), caller: caller)
        #expect(try store.copyMatching(genericPassword(account: "nodata", ["r_Data": .bool(true)]), caller: caller) == .data(Data()))
        let attributes = try store.copyMatching(genericPassword(account: "nodata", ["r_Data": .bool(true), "r_Attributes": .bool(true)]), caller: caller)?.dictionary
        #expect(attributes != nil && attributes?["v_Data"] == nil)
        let empty = try store.copyMatching(genericPassword(account: "empty", ["r_Data": .bool(true), "r_Attributes": .bool(true)]), caller: caller)?.dictionary
        #expect(empty?["v_Data"] == .data(Data()))
    }

    @Test func notFound() throws {
        try addThree()
        #expect(osStatus { try store.copyMatching(genericPassword(account: "zzz"), caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "zzz", ["m_Limit": .string("m_LimitAll")]), caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(["class": .string("inet")], caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func nonIndexedAttributesAreConfirmedAfterDecryption() throws {
        _ = try store.add(genericPassword(account: "a", ["invi": .bool(true), "crtr": .number(0x61626364)]), caller: caller)
        _ = try store.add(genericPassword(account: "b", ["invi": .bool(false)]), caller: caller)
        let hits = try store.copyMatching(genericPassword(["invi": .bool(true), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)?.array
        #expect(hits?.count == 1)
        #expect(hits?.first?.dictionary?["acct"] == .string("a"))
        #expect(osStatus { try store.copyMatching(genericPassword(["crtr": .number(1)]), caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func stringsCompareByteForByte() throws {
        _ = try store.add(genericPassword(account: "caf\u{E9}"), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "caf\u{E9}"), caller: caller) } == OSStatusCode.success)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "Caf\u{E9}"), caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "cafe\u{301}"), caller: caller) } == OSStatusCode.itemNotFound,
                "no Unicode normalization, as SQLite and Apple compare bytes")
    }
}
