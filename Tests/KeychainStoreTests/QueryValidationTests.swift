import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing
@testable import KeychainCallers

@Suite struct QueryValidationTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    @Test func unknownClassIsNoSuchClass() {
        #expect(osStatus { try store.add(["class": .string("pass")], caller: caller) } == OSStatusCode.noSuchClass)
        #expect(osStatus { try store.copyMatching(["class": .string("GENP")], caller: caller) } == OSStatusCode.noSuchClass)
        #expect(osStatus { try store.delete(["class": .string("")], caller: caller) } == OSStatusCode.noSuchClass)
    }

    @Test func missingOrMistypedClassIsParam() {
        #expect(osStatus { try store.add(["acct": .string("a")], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching([:], caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(["class": .number(1)], caller: caller) } == OSStatusCode.param)
    }

    @Test func attributeOfTheWrongTypeIsParam() {
        let cases: [(String, KeychainValue)] = [
            ("acct", .number(1)), ("agrp", .data(Data([1]))), ("labl", .bool(true)), ("gena", .number(2)),
            ("invi", .string("yes")), ("crtr", .string("abcd")), ("cdat", .string("today")),
            ("agrp", .number(1)), ("agrp", .string("")), ("pdmn", .string("always")), ("sync", .string("yes")),
            ("acct", .array([.string("a")])),
        ]
        for (name, value) in cases {
            #expect(osStatus { try store.copyMatching(genericPassword([name: value]), caller: caller) } == OSStatusCode.param, "\(name) = \(value.typeName)")
        }
        #expect(osStatus { try store.add(genericPassword(["v_Data": .string("pw")]), caller: caller) } == OSStatusCode.param)
    }

    @Test func internalAttributesAreParam() {
        for name in ["sha1", "UUID", "musr", "persistref", "v_pk", "accc"] {
            #expect(osStatus { try store.copyMatching(genericPassword([name: .data(Data([1]))]), caller: caller) } == OSStatusCode.param, "\(name)")
        }
        #expect(osStatus { try store.add(genericPassword(["tomb": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.add(genericPassword(["cdat": .date(Date())]), caller: caller) } == OSStatusCode.param)
    }

    @Test func unknownAttributeIsNoSuchAttr() {
        #expect(osStatus { try store.copyMatching(genericPassword(["zzzz": .string("a")]), caller: caller) } == OSStatusCode.noSuchAttr)
        #expect(osStatus { try store.copyMatching(genericPassword(["srvr": .string("a")]), caller: caller) } == OSStatusCode.noSuchAttr,
                "srvr belongs to internet passwords")
        #expect(osStatus { try store.copyMatching(["class": .string("cert"), "acct": .string("a")], caller: caller) } == OSStatusCode.noSuchAttr)
    }

    @Test func optionsThatDoNotApply() {
        #expect(osStatus { try store.add(genericPassword(["m_Limit": .string("m_LimitAll")]), caller: caller) } == OSStatusCode.success,
                "Apple's server parses and ignores a limit on add")
        #expect(osStatus { try store.add(genericPassword(account: "x", ["m_CaseInsensitive": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["m_Limit": .string("many")]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["m_Limit": .number(0)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["r_Data": .string("yes")]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["r_Everything": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["m_Bogus": .bool(true)]), caller: caller) } == OSStatusCode.param)
        #expect(osStatus { try store.copyMatching(genericPassword(["m_CaseInsensitive": .bool(true)]), caller: caller) } == OSStatusCode.unimplemented)
        #expect(osStatus { try store.copyMatching(genericPassword(["u_Tomb": .bool(true)]), caller: caller) } == OSStatusCode.param)
    }

    @Test func dataProtectionKeychainFlagIsAccepted() throws {
        _ = try store.add(genericPassword(account: "a", ["nleg": .bool(true)]), caller: caller)
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a", ["nleg": .bool(true)]), caller: caller) } == OSStatusCode.success)
    }

    @Test func oversizedValuesAreRefused() {
        let big = String(repeating: "x", count: AttributeDescriptor.maximumValueSize + 1)
        #expect(osStatus { try store.add(genericPassword(account: big), caller: caller) } == OSStatusCode.dataTooLarge)
        let bigSecret = Data(count: ItemQuery.maximumDataSize + 1)
        #expect(osStatus { try store.add(genericPassword(account: "a", ["v_Data": .data(bigSecret)]), caller: caller) } == OSStatusCode.dataTooLarge)
    }

    @Test func identitiesAreNotAddedDirectly() {
        #expect(osStatus { try store.add(["class": .string("idnt"), "labl": .string("x")], caller: caller) } == OSStatusCode.param)
    }

    @Test func errorsCarryApplesMessages() {
        do {
            _ = try store.copyMatching(genericPassword(account: "missing"), caller: caller)
            Issue.record("expected errSecItemNotFound")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.itemNotFound)
            #expect(error.message == "The specified item could not be found in the keychain.")
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(KeychainError.appleMessage(for: -50) == "One or more parameters passed to a function were not valid.")
        #expect(KeychainError.appleMessage(for: -25299) == "The specified item already exists in the keychain.")
        #expect(KeychainError.appleMessage(for: -26275) == "Unable to decode the provided data.")
        #expect(KeychainError.appleMessage(for: -34018) == "A required entitlement isn't present.")
    }
}

@Suite struct AccessGroupTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    @Test func explicitGroupOutsideTheCallersListIsMissingEntitlement() {
        #expect(osStatus { try store.add(genericPassword(account: "a", ["agrp": .string("other.team")]), caller: caller) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try store.copyMatching(genericPassword(["agrp": .string("other.team")]), caller: caller) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try store.delete(genericPassword(["agrp": .string("other.team")]), caller: caller) } == OSStatusCode.missingEntitlement)
    }

    @Test func queryWithoutGroupSeesAllOfTheCallersGroupsAndNoOthers() throws {
        _ = try store.add(genericPassword(account: "one"), caller: caller)
        _ = try store.add(genericPassword(account: "two", ["agrp": .string("test.shared")]), caller: caller)
        let other = AccessGroups(["other.app", "test.shared"])
        _ = try store.add(genericPassword(account: "three"), caller: other)

        let mine = try store.copyMatching(genericPassword(["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)?
            .array?.compactMap { $0.dictionary?["acct"]?.stringValue }
        #expect(mine == ["one", "two"])
        let theirs = try store.copyMatching(genericPassword(["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: other)?
            .array?.compactMap { $0.dictionary?["acct"]?.stringValue }
        #expect(theirs == ["two", "three"])
        #expect(osStatus { try store.delete(genericPassword(account: "three"), caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.update(genericPassword(account: "one"), attributes: ["labl": .string("x")], caller: other) } == OSStatusCode.itemNotFound)
    }
}
