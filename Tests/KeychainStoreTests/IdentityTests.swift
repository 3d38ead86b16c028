import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

@Suite struct IdentityTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func addCertificate(serial: UInt8, publicKeyHash: Data, label: String) throws {
        _ = try store.add(
            ["class": .string("cert"), "issr": .utf8("CA"), "slnr": .data(Data([serial])), "pkhh": .data(publicKeyHash),
             "labl": .string(label), "v_Data": .utf8("DER \(serial)")], caller: caller)
    }

    func addKey(label: Data, keyClass: String) throws {
        _ = try store.add(["class": .string("keys"), "klbl": .data(label), "kcls": .string(keyClass), "v_Data": .utf8("key")], caller: caller)
    }

    @Test func identityJoinsACertificateWithItsPrivateKey() throws {
        let hash = Data(repeating: 0xAB, count: 20)
        try addCertificate(serial: 1, publicKeyHash: hash, label: "mine")
        try addCertificate(serial: 2, publicKeyHash: Data(repeating: 0xCD, count: 20), label: "public key only")
        try addKey(label: hash, keyClass: "1")
        try addKey(label: Data(repeating: 0xCD, count: 20), keyClass: "0")

        let all = try store.copyMatching(["class": .string("idnt"), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")], caller: caller)?.array
        #expect(all?.count == 1)
        let identity = try #require(all?.first?.dictionary)
        #expect(identity["class"] == .string("idnt"))
        #expect(identity["labl"] == .string("mine"))
        #expect(identity["kcls"] == .number(1))
        #expect(try store.copyMatching(["class": .string("idnt"), "labl": .string("mine"), "r_Data": .bool(true)], caller: caller) == .utf8("DER 1"))
        #expect(osStatus { try store.copyMatching(["class": .string("idnt"), "labl": .string("public key only")], caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func deletingAnIdentityRemovesItsCertificateAndKey() throws {
        let hash = Data(repeating: 1, count: 20)
        try addCertificate(serial: 9, publicKeyHash: hash, label: "gone")
        try addKey(label: hash, keyClass: "1")
        try store.delete(["class": .string("idnt"), "labl": .string("gone")], caller: caller)
        #expect(osStatus { try store.copyMatching(["class": .string("cert")], caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(["class": .string("keys")], caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.delete(["class": .string("idnt")], caller: caller) } == OSStatusCode.itemNotFound)
    }

    @Test func deletingAnIdentityKeepsAKeyAnotherCertificateStillNames() throws {
        let hash = Data(repeating: 2, count: 20)
        try addCertificate(serial: 10, publicKeyHash: hash, label: "old")
        try addCertificate(serial: 11, publicKeyHash: hash, label: "renewed")
        try addKey(label: hash, keyClass: "1")
        try store.delete(["class": .string("idnt"), "labl": .string("old")], caller: caller)
        #expect(osStatus { try store.copyMatching(["class": .string("cert"), "labl": .string("old")], caller: caller) } == OSStatusCode.itemNotFound)
        #expect(osStatus { try store.copyMatching(["class": .string("keys")], caller: caller) } == OSStatusCode.success, "the renewed certificate still uses it")
        #expect(osStatus { try store.copyMatching(["class": .string("idnt"), "labl": .string("renewed")], caller: caller) } == OSStatusCode.success)
        try store.delete(["class": .string("idnt"), "labl": .string("renewed")], caller: caller)
        #expect(osStatus { try store.copyMatching(["class": .string("keys")], caller: caller) } == OSStatusCode.itemNotFound, "the last one takes the key")
    }
}
