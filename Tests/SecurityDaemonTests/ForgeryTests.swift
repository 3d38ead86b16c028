import CodeSigning
import Crypto
import Foundation
import KeychainModel
import KeychainTestSupport
import Testing
import X509

/// Each way to pass off code as a team's makes the caller unsigned: it keeps only its
/// implicit group (so the team's group is -34018), and the daemon logs why.
@Suite struct ForgeryTests {
    let fixture: SignedAppsFixture
    let identityA: String
    static let entitlements = #"{"keychain-access-groups": ["AAAAAAAAAA.one"]}"#

    init() throws {
        fixture = try SignedAppsFixture()
        identityA = try fixture.identity(team: teamA)
    }

    /// The app `name` may not use team A's group, may use an implicit one, and the
    /// daemon's log says why it is unsigned.
    func expectUnsigned(_ name: String, because reason: String, environment: [String: String] = [:], wrapper: [String] = [],
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let named = try fixture.run(name, "add", "x", "v", "\(teamA).one", environment: environment, wrapper: wrapper)
        #expect(named.status == OSStatusCode.missingEntitlement.rawValue, "\(name): \(named)", sourceLocation: sourceLocation)
        let implicit = try fixture.run(name, "add", "y", "v", environment: environment, wrapper: wrapper)
        #expect(implicit.status == 0, sourceLocation: sourceLocation)
        #expect(try fixture.run(name, "find", "y", environment: environment, wrapper: wrapper).group?.hasPrefix("unsigned.") == true,
                sourceLocation: sourceLocation)
        #expect(fixture.daemonLog.contains(reason), "log: \(fixture.daemonLog)", sourceLocation: sourceLocation)
    }

    func edit(_ name: String, _ change: (inout Data) throws -> Void) throws {
        let path = fixture.directory + "/" + name
        var file = try Data(contentsOf: URL(fileURLWithPath: path))
        try change(&file)
        try FileManager.default.removeItem(atPath: path)  // a new inode, as an attacker's copy would be
        try CommandRunner.writeExecutable(file, to: path)
    }

    @Test func theGenuineAppIsSigned() throws {
        try fixture.signedApp("genuine", identity: identityA, entitlements: Self.entitlements)
        #expect(try fixture.run("genuine", "add", "x", "v", "\(teamA).one").status == 0)
        #expect(try fixture.run("genuine", "find", "x").group == "\(teamA).one")
    }

    @Test func displayShowsTheSignatureAndWhetherThisKeychainTrustsIt() throws {
        let path = try fixture.signedApp("shown", identity: identityA, entitlements: Self.entitlements)
        let shown = try fixture.security("codesign", "--display", path)
        #expect(shown.status == 0, "\(shown.stderr)")
        for line in ["Executable=\(path)", "Authority=Trousseau Developer: \(teamA)", "TeamIdentifier=\(teamA)",
                     "Verification=valid for \(fixture.keychain.home)", "    keychain-access-groups=\(teamA).one"] {
            #expect(shown.stdout.split(separator: "\n").contains(Substring(line)), "missing \(line) in:\n\(shown.stdout)")
        }
        try edit("shown") { $0[100] ^= 0x01 }
        #expect(try fixture.security("codesign", "--display", path).stdout.contains("Verification=not valid for \(fixture.keychain.home): the executable was modified after it was signed"))
        let unsigned = try fixture.app("plain")
        let refused = try fixture.security("codesign", "--display", unsigned)
        #expect(refused.status == 1 && refused.stderr == "\(unsigned): code object is not signed at all\n")
    }

    @Test func aForgedSignature() throws {
        try fixture.signedApp("forged", identity: identityA, entitlements: Self.entitlements)
        try edit("forged") { file in
            file[file.count - CodeSignature.trailer.count - 4 - 3] ^= 0x01  // inside the ECDSA signature
        }
        try expectUnsigned("forged", because: "the code signature does not verify")
    }

    @Test func aBinaryModifiedAfterSigning() throws {
        try fixture.signedApp("modified", identity: identityA, entitlements: Self.entitlements)
        try edit("modified") { file in
            let marker = Data("TROUSSEAU-PROBE-MARKER-0123456789".utf8)
            let range = try #require(file.range(of: marker))
            file[range.upperBound - 1] = UInt8(ascii: "8")
        }
        #expect(try fixture.run("modified", "list").status != nil, "the modified copy still runs")
        try expectUnsigned("modified", because: "modified after it was signed")
    }

    @Test func aCertificateFromAnUntrustedRoot() throws {
        // Another keychain's local root issued this identity; this keychain never trusted it.
        let other = try SignedAppsFixture()
        let stranger = try other.identity(team: teamA)
        try fixture.signedApp("stranger", identity: stranger, entitlements: Self.entitlements)
        try expectUnsigned("stranger", because: "not issued by a trusted developer root")
    }

    @Test func anExpiredCertificateFromATrustedRoot() throws {
        // A root the user trusts by hand (a PEM in developer-roots), with one current and
        // one expired identity.
        let rootKey = P256.Signing.PrivateKey()
        let then = Date() - 2 * DeveloperCertificate.lifetime
        let root = try DeveloperRoot.create(key: rootKey, name: "Hand-trusted Root", now: then)
        let roots = DeveloperRoots.userDirectory(home: fixture.keychain.home)
        try FileManager.default.createDirectory(atPath: roots, withIntermediateDirectories: true)
        try root.pem.write(toFile: roots + "/hand-trusted.pem", atomically: true, encoding: .utf8)

        func sign(_ name: String, issuedAt: Date) throws {
            let key = P256.Signing.PrivateKey()
            let identity = try DeveloperIdentity(key: key, certificate: DeveloperCertificate.issue(
                team: TeamIdentifier(teamA), applicationGroups: [], publicKey: key.publicKey, root: root, rootKey: rootKey, now: issuedAt))
            let path = try fixture.app(name)
            let code = try Data(contentsOf: URL(fileURLWithPath: path))
            try edit(name) { file in
                file = code + (try identity.sign(code: code, entitlements: Entitlements(keychainAccessGroups: ["\(teamA).one"]))).appendix
            }
        }
        try sign("current", issuedAt: Date())
        #expect(try fixture.run("current", "add", "x", "v", "\(teamA).one").status == 0, "a hand-trusted root is trusted")
        try sign("expired", issuedAt: then)
        try expectUnsigned("expired", because: "is not valid now")
    }

    @Test func entitlementsClaimingAnotherTeamsGroups() throws {
        // security codesign refuses to sign them…
        let file = fixture.directory + "/greedy.json"
        try #"{"keychain-access-groups": ["AAAAAAAAAA.one", "BBBBBBBBBB.one"]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let path = try fixture.app("greedy")
        let refused = try fixture.security("codesign", "--identity", identityA, "--entitlements", file, path)
        #expect(refused.status != 0)
        // …and a signature made without it does not get them either.
        let identity = try DeveloperIdentity(directory: identityA)
        let code = try Data(contentsOf: URL(fileURLWithPath: path))
        try edit("greedy") { file in
            file = code + (try identity.sign(code: code, entitlements: Entitlements(keychainAccessGroups: ["\(teamA).one", "\(teamB).one"]))).appendix
        }
        try expectUnsigned("greedy", because: "not in team AAAAAAAAAA's namespace")
    }

    @Test func anAppGroupTheRootDidNotRegister() throws {
        let identity = try DeveloperIdentity(directory: identityA)  // registered no app groups
        let path = try fixture.app("squatter")
        let code = try Data(contentsOf: URL(fileURLWithPath: path))
        try edit("squatter") { file in
            file = code + (try identity.sign(code: code, entitlements: Entitlements(applicationGroups: ["group.someone-else"]))).appendix
        }
        try expectUnsigned("squatter", because: "nor registered to it by its root")
    }

    @Test func aSignedAppStartedWithLDPreload() throws {
        try fixture.signedApp("preloaded", identity: identityA, entitlements: Self.entitlements)
        try expectUnsigned("preloaded", because: "it was started with LD_PRELOAD", environment: ["LD_PRELOAD": "libm.so.6"])
    }

    @Test(.requires("strace"))
    func aTracedSignedApp() throws {
        try fixture.signedApp("traced", identity: identityA, entitlements: Self.entitlements)
        try expectUnsigned("traced", because: "it is traced by pid", wrapper: ["/usr/bin/strace", "-f", "-o", "/dev/null"])
    }
}
