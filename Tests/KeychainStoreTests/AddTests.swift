import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct AddTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    @Test func addThenReadBackTheSecret() throws {
        _ = try store.add(genericPassword(account: "alice", service: "mail", ["v_Data": .utf8("hunter2")]), caller: caller)
        let data = try store.copyMatching(genericPassword(account: "alice", service: "mail", ["r_Data": .bool(true)]), caller: caller)
        #expect(data == .utf8("hunter2"))
    }

    @Test func addAssignsDatesDefaultsAndGroup() throws {
        let before = Date()
        _ = try store.add(genericPassword(service: "svc"), caller: caller)
        let attributes = try #require(
            try store.copyMatching(genericPassword(service: "svc", ["r_Attributes": .bool(true)]), caller: caller)?.dictionary)
        guard case .date(let created)? = attributes["cdat"], case .date(let modified)? = attributes["mdat"] else {
            Issue.record("cdat and mdat must be dates")
            return
        }
        #expect(created == modified)
        #expect(created >= before.addingTimeInterval(-1) && created <= Date().addingTimeInterval(1))
        #expect(attributes["pdmn"] == .string("ak"))
        #expect(attributes["agrp"] == .string("test.group"))
        #expect(attributes["acct"] == .string(""), "a missing primary-key attribute takes its default")
        #expect(attributes["sync"] == .bool(false))
        #expect(attributes["class"] == .string("genp"))
        #expect(attributes["v_Data"] == nil)
    }

    @Test func certificatesDefaultToAlways() throws {
        _ = try store.add(["class": .string("cert"), "issr": .utf8("CA"), "slnr": .data(Data([1]))], caller: caller)
        let attributes = try store.copyMatching(["class": .string("cert"), "r_Attributes": .bool(true)], caller: caller)?.dictionary
        #expect(attributes?["pdmn"] == .string("dk"))
        #expect(attributes?["ctyp"] == .number(0))
    }

    @Test func duplicatePrimaryKeyIsRejected() throws {
        _ = try store.add(genericPassword(account: "a", service: "s", ["v_Data": .utf8("one")]), caller: caller)
        #expect(osStatus { try store.add(genericPassword(account: "a", service: "s", ["labl": .string("other")]), caller: caller) } == OSStatusCode.duplicateItem)
        // The original is untouched.
        #expect(try store.copyMatching(genericPassword(account: "a", service: "s", ["r_Data": .bool(true)]), caller: caller) == .utf8("one"))
    }

    @Test func missingPrimaryKeyAttributesTakeDefaultsBeforeUniqueness() throws {
        _ = try store.add(genericPassword(service: "s"), caller: caller)
        #expect(osStatus { try store.add(genericPassword(account: "", service: "s"), caller: caller) } == OSStatusCode.duplicateItem)
        #expect(osStatus { try store.add(genericPassword(account: "x", service: "s"), caller: caller) } == OSStatusCode.success)
    }

    @Test func groupAndSyncArePartOfThePrimaryKey() throws {
        _ = try store.add(genericPassword(account: "a", service: "s"), caller: caller)
        #expect(osStatus { try store.add(genericPassword(account: "a", service: "s", ["agrp": .string("test.shared")]), caller: caller) } == OSStatusCode.success)
        #expect(osStatus { try store.add(genericPassword(account: "a", service: "s", ["sync": .bool(true)]), caller: caller) } == OSStatusCode.success)
        #expect(osStatus { try store.add(genericPassword(account: "a", service: "s", ["pdmn": .string("dk")]), caller: caller) } == OSStatusCode.duplicateItem,
                "pdmn is not part of the primary key")
    }

    @Test func internetPasswordPrimaryKey() throws {
        let base: [String: KeychainValue] = [
            "class": .string("inet"), "acct": .string("bob"), "srvr": .string("example.com"),
            "ptcl": .string("htps"), "port": .number(443), "path": .string("/"),
        ]
        _ = try store.add(base, caller: caller)
        #expect(osStatus { try store.add(base, caller: caller) } == OSStatusCode.duplicateItem)
        for (name, value) in [("port", KeychainValue.number(8443)), ("sdmn", .string("realm")), ("atyp", .string("dflt")),
                              ("path", .string("/x")), ("ptcl", .string("http")), ("srvr", .string("b.example"))] {
            var other = base
            other[name] = value
            #expect(osStatus { try store.add(other, caller: caller) } == OSStatusCode.success, "\(name) is part of the inet primary key")
        }
        #expect(osStatus { try store.add(base.merging(["labl": .string("x")]) { $1 }, caller: caller) } == OSStatusCode.duplicateItem)
    }

    @Test func keyPrimaryKeyAndCoercions() throws {
        let key: [String: KeychainValue] = [
            "class": .string("keys"), "kcls": .string("1"), "type": .string("73"), "bsiz": .number(256),
            "atag": .string("com.example.key"), "v_Data": .utf8("key bytes"),
        ]
        _ = try store.add(key, caller: caller)
        #expect(osStatus { try store.add(key, caller: caller) } == OSStatusCode.duplicateItem)
        var other = key
        other["bsiz"] = .number(384)
        #expect(osStatus { try store.add(other, caller: caller) } == OSStatusCode.success)
        let found = try store.copyMatching(
            ["class": .string("keys"), "atag": .utf8("com.example.key"), "bsiz": .number(256), "r_Attributes": .bool(true)],
            caller: caller)?.dictionary
        #expect(found?["kcls"] == .number(1), "Apple's key-class constants are decimal strings")
        #expect(found?["atag"] == .utf8("com.example.key"), "a string tag is stored as its UTF-8 bytes")
        #expect(found?["sdat"] == .date(Date(timeIntervalSinceReferenceDate: 0)))
    }

    /// Apple's securityd stores a synchronizable ThisDeviceOnly item as asked (its class keys
    /// keep it on the device); only an access control with constraints cannot be synchronizable.
    @Test func synchronizableThisDeviceOnlyIsStoredAsAsked() throws {
        _ = try store.add(genericPassword(account: "a", ["sync": .bool(true), "pdmn": .string("aku")]), caller: caller)
        let found = try store.copyMatching(genericPassword(account: "a", ["sync": .bool(true), "r_Attributes": .bool(true)]), caller: caller)?.dictionary
        #expect(found?["sync"] == .bool(true) && found?["pdmn"] == .string("aku"))
        let constrained = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        #expect(
            osStatus { try store.add(genericPassword(account: "b", ["sync": .bool(true), "accc": .data(constrained.encoded)]), caller: caller) }
                == OSStatusCode.param)
    }

    @Test func addReturnsWhatItWasAskedFor() throws {
        let result = try store.add(genericPassword(account: "a", ["v_Data": .utf8("pw"), "r_Attributes": .bool(true), "r_Data": .bool(true)]), caller: caller)
        #expect(result?.dictionary?["v_Data"] == .utf8("pw"))
        #expect(result?.dictionary?["acct"] == .string("a"))
        #expect(try store.add(genericPassword(account: "b"), caller: caller) == nil)
    }
}
