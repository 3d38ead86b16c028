import CodeSigning
import Crypto
import Foundation
import KeychainModel
import Testing
import X509

/// Signatures over in-memory "executables", verified against in-memory roots: every way a
/// signature can fail to vouch for code ends as unsigned, with a reason.
@Suite struct CodeSignatureTests {
    let rootKey = P256.Signing.PrivateKey()
    let root: DeveloperRoot
    let identity: DeveloperIdentity
    let code = Data("\u{7F}ELF pretend code".utf8) + Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let entitlements = Entitlements(
        applicationIdentifier: "AAAAAAAAAA.app", keychainAccessGroups: ["AAAAAAAAAA.shared"], applicationGroups: ["group.shared"])

    init() throws {
        root = try DeveloperRoot.create(key: rootKey, name: "Test Root")
        identity = try Self.identity(team: "AAAAAAAAAA", groups: ["group.shared"], root: root, rootKey: rootKey)
    }

    static func identity(team: String, groups: [String] = [], root: DeveloperRoot, rootKey: P256.Signing.PrivateKey, now: Date = Date()) throws -> DeveloperIdentity {
        let key = P256.Signing.PrivateKey()
        let certificate = try DeveloperCertificate.issue(
            team: TeamIdentifier(team), applicationGroups: groups, publicKey: key.publicKey, root: root, rootKey: rootKey, now: now)
        return try DeveloperIdentity(key: key, certificate: certificate)
    }

    var verifier: CodeSignatureVerifier { CodeSignatureVerifier(roots: DeveloperRoots([root])) }

    func signed(_ entitlements: Entitlements? = nil, by identity: DeveloperIdentity? = nil) throws -> Data {
        code + (try (identity ?? self.identity).sign(code: code, entitlements: entitlements ?? self.entitlements)).appendix
    }

    func reason(_ identity: CodeIdentity) -> String? {
        if case .unsigned(let reason) = identity { return reason }
        return nil
    }

    @Test func aValidSignatureGrantsItsEntitlementsInOrder() throws {
        guard case .signed(let code) = verifier.verify(executable: try signed()) else {
            Issue.record("a valid signature was refused")
            return
        }
        #expect(code.team.rawValue == "AAAAAAAAAA")
        #expect(code.entitlements.accessGroups == ["AAAAAAAAAA.shared", "AAAAAAAAAA.app", "group.shared"])
    }

    @Test func codeWithoutASignatureIsUnsigned() {
        #expect(reason(verifier.verify(executable: code)) == CodeSignatureVerifier.noSignature)
    }

    @Test func aForgedSignatureIsRefused() throws {
        var file = try signed()
        // The signature is the block's last field, just before its length and trailer.
        let index = file.count - CodeSignature.trailer.count - 4 - 3
        file[index] ^= 0x01
        #expect(reason(verifier.verify(executable: file))?.contains("does not verify") == true)
    }

    @Test func codeModifiedAfterSigningIsRefused() throws {
        var file = try signed()
        file[10] ^= 0x01
        #expect(reason(verifier.verify(executable: file))?.contains("modified after it was signed") == true)
    }

    @Test func entitlementsSwappedAfterSigningAreRefused() throws {
        var signature = try identity.sign(code: code, entitlements: entitlements)
        signature.entitlements.keychainAccessGroups.append("AAAAAAAAAA.more")
        #expect(reason(verifier.verify(executable: code + signature.appendix))?.contains("does not verify") == true)
    }

    @Test func aCertificateFromAnUntrustedRootIsRefused() throws {
        let otherKey = P256.Signing.PrivateKey()
        let other = try DeveloperRoot.create(key: otherKey, name: "Test Root")  // same name, other key
        let stranger = try Self.identity(team: "AAAAAAAAAA", groups: ["group.shared"], root: other, rootKey: otherKey)
        #expect(reason(verifier.verify(executable: try signed(by: stranger)))?.contains("not issued by a trusted developer root") == true)
    }

    @Test func anExpiredCertificateIsRefused() throws {
        let then = Date() - 2 * DeveloperCertificate.lifetime
        let oldRoot = try DeveloperRoot.create(key: rootKey, name: "Test Root", now: then)
        let old = try Self.identity(team: "AAAAAAAAAA", groups: ["group.shared"], root: oldRoot, rootKey: rootKey, now: then)
        let verifier = CodeSignatureVerifier(roots: DeveloperRoots([oldRoot]))
        #expect(reason(verifier.verify(executable: try signed(by: old)))?.contains("not valid now") == true)
        // It was valid before it expired.
        if case .unsigned(let reason) = verifier.verify(executable: try signed(by: old), at: then + 86_400) {
            Issue.record("refused while valid: \(reason)")
        }
    }

    @Test(arguments: [
        Entitlements(keychainAccessGroups: ["BBBBBBBBBB.shared"]),
        Entitlements(applicationIdentifier: "BBBBBBBBBB.app"),
        Entitlements(applicationGroups: ["group.other"]),
        Entitlements(keychainAccessGroups: ["AAAAAAAAAA"]),
        Entitlements(keychainAccessGroups: ["unsigned.0123456789abcdef"]),
    ])
    func entitlementsBeyondTheTeamAreRefused(_ claimed: Entitlements) throws {
        #expect(reason(verifier.verify(executable: try signed(claimed)))?.contains("claim more than team AAAAAAAAAA owns") == true)
    }

    @Test func anotherTeamCannotUseAnApplicationGroupRegisteredToTheFirst() throws {
        let other = try Self.identity(team: "BBBBBBBBBB", root: root, rootKey: rootKey)
        let claim = Entitlements(applicationGroups: ["group.shared"])
        let file = try signed(claim, by: other)
        #expect(reason(verifier.verify(executable: file))?.contains("neither in team BBBBBBBBBB's namespace nor registered") == true)
    }

    @Test func resigningReplacesTheSignature() throws {
        let first = try signed()
        let code = try #require(CodeSignature.split(first)).code
        #expect(code == self.code)
        let again = code + (try identity.sign(code: code, entitlements: Entitlements(keychainAccessGroups: ["AAAAAAAAAA.other"]))).appendix
        guard case .signed(let signed) = verifier.verify(executable: again) else {
            Issue.record("re-signed code refused")
            return
        }
        #expect(signed.entitlements.accessGroups == ["AAAAAAAAAA.other"])
    }

    @Test func malformedBlocksAreUnsignedNotCrashes() throws {
        let file = try signed()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var mutated = file
            let start = code.count
            let index = Int.random(in: start..<(file.count - CodeSignature.trailer.count - 4), using: &generator)
            mutated[index] = UInt8.random(in: 0...255, using: &generator)
            if mutated == file { continue }
            #expect(reason(verifier.verify(executable: mutated)) != nil)
        }
    }

    @Test func teamIdentifiersAreTenUpperCaseLettersAndDigits() {
        #expect((try? TeamIdentifier("A1B2C3D4E5")) != nil)
        for bad in ["", "abcdefghij", "AAAAAAAAA", "AAAAAAAAAAA", "AAAAAAAAA.", "trousseau."] {
            #expect(throws: KeychainError(status: OSStatusCode.param)) { try TeamIdentifier(bad) }
        }
    }

    @Test func rootsRegisterOnlyGroupDotApplicationGroups() throws {
        let key = P256.Signing.PrivateKey()
        for bad in ["AAAAAAAAAA.x", "trousseau.developer-root", "group.", "unsigned.x"] {
            #expect(throws: KeychainError(status: OSStatusCode.param)) {
                try DeveloperCertificate.issue(
                    team: TeamIdentifier("AAAAAAAAAA"), applicationGroups: [bad], publicKey: key.publicKey, root: root, rootKey: rootKey)
            }
        }
    }
}

@Suite struct EntitlementsFileTests {
    @Test func readsAPropertyList() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>application-identifier</key>
                <string>AAAAAAAAAA.com.example.app</string>
                <key>keychain-access-groups</key>
                <array>
                    <string>AAAAAAAAAA.com.example.shared</string>
                </array>
                <key>com.apple.security.application-groups</key>
                <array>
                    <string>group.com.example</string>
                </array>
                <key>aps-environment</key>
                <string>development</string>
            </dict>
            </plist>
            """
        let entitlements = try Entitlements(file: Data(plist.utf8))
        #expect(entitlements.accessGroups == ["AAAAAAAAAA.com.example.shared", "AAAAAAAAAA.com.example.app", "group.com.example"])
    }

    @Test func readsJSON() throws {
        let json = #"{"keychain-access-groups": ["AAAAAAAAAA.a", "AAAAAAAAAA.b"]}"#
        #expect(try Entitlements(file: Data(json.utf8)).accessGroups == ["AAAAAAAAAA.a", "AAAAAAAAAA.b"])
    }

    @Test func refusesTheWrongTypes() {
        for bad in [#"{"keychain-access-groups": "AAAAAAAAAA.a"}"#, "not a file", #"["AAAAAAAAAA.a"]"#] {
            #expect(throws: KeychainError(status: OSStatusCode.param)) { try Entitlements(file: Data(bad.utf8)) }
        }
    }

    /// Binary property lists are refused with errSecParam, never given to Foundation's binary
    /// reader, which traps on some malformed ones (the `profile` fuzzer's inputs; this one did
    /// not trap for the entitlements' keys, but nothing bounds which would).
    @Test func binaryPropertyListsAreRefusedNotRead() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus/profile").standardized
        for name in ["string-length-past-the-end", "seed-binary"] {
            let bytes = try Data(contentsOf: corpus.appendingPathComponent(name))
            #expect(throws: KeychainError(status: OSStatusCode.param)) { try Entitlements(file: bytes) }
        }
    }

    @Test func theSignedFormRoundTrips() throws {
        let entitlements = Entitlements(applicationIdentifier: "AAAAAAAAAA.x", keychainAccessGroups: ["AAAAAAAAAA.y"], applicationGroups: ["group.z"])
        #expect(try Entitlements(encoded: entitlements.encoded) == entitlements)
        #expect(try Entitlements(encoded: Entitlements().encoded) == Entitlements())
    }
}
