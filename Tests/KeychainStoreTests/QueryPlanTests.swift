import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct QueryPlanTests {
    let keychain: TemporaryKeychain
    init() throws {
        keychain = try TemporaryKeychain()
        for i in 0..<50 {
            _ = try keychain.store.add(genericPassword(account: "user\(i)", service: "svc\(i % 5)"), caller: keychain.caller)
        }
    }

    func plan(_ query: [String: KeychainValue]) throws -> String {
        try keychain.store.queryPlan(for: query, caller: keychain.caller).joined(separator: "\n")
    }

    @Test(arguments: [
        genericPassword(account: "user7", service: "svc2"),
        genericPassword(account: "user7"),
        genericPassword(service: "svc2"),
        ["class": .string("inet"), "srvr": .string("example.com")],
        ["class": .string("cert"), "issr": .data(.init([1])), "slnr": .data(.init([2]))],
        ["class": .string("keys"), "atag": .data(.init([1]))],
    ] as [[String: KeychainValue]])
    func primaryKeyLookupsUseAnIndex(query: [String: KeychainValue]) throws {
        let detail = try plan(query)
        #expect(detail.contains("USING INDEX"), "\(detail)")
        #expect(!detail.contains("SCAN"), "\(detail)")
    }

    /// Many accounts share a service: an index on the service alone would walk all of
    /// them (the benchmark found find-by-primary-key growing with the keychain).
    @Test(arguments: [
        (genericPassword(account: "user7", service: "svc2"), "t_acct=? AND t_svce=?"),
        (["class": .string("inet"), "acct": .string("octocat"), "srvr": .string("github.com")], "t_acct=? AND t_srvr=?"),
        (["class": .string("cert"), "issr": .data(.init([1])), "slnr": .data(.init([2]))], "t_slnr=? AND t_issr=?"),
        (["class": .string("keys"), "atag": .data(.init([1])), "klbl": .data(.init([2]))], "t_atag=? AND t_klbl=?"),
    ] as [([String: KeychainValue], String)])
    func aLookupByBothPairAttributesUsesOneIndexOnBoth(query: [String: KeychainValue], constraint: String) throws {
        let detail = try plan(query)
        #expect(detail.contains(constraint), "\(detail)")
    }

    @Test func persistentReferenceLookupUsesTheUUIDIndex() throws {
        let reference = try #require(try keychain.store.copyMatching(genericPassword(account: "user3", ["r_PersistentRef": .bool(true)]), caller: keychain.caller))
        let detail = try plan(["v_PersistentRef": reference])
        #expect(detail.contains("USING INDEX"), "\(detail)")
    }
}
