import CodeSigning
import Crypto
import Foundation
import KeychainModel
import KeychainProtocol
import KeychainTestSupport
import Testing
import X509

let teamA = "AAAAAAAAAA"
let teamB = "BBBBBBBBBB"

/// Two apps of team A, one of team B and an unsigned one against one real daemon: each
/// sees only its groups, team A's apps share their groups, and naming a group one is not
/// entitled to is -34018.
@Suite struct AccessIsolationTests {
    let fixture: SignedAppsFixture

    init() throws {
        fixture = try SignedAppsFixture()
        let identityA = try fixture.identity(team: teamA, appGroups: ["group.shared"])
        let identityB = try fixture.identity(team: teamB)
        try fixture.signedApp("a1", identity: identityA, entitlements: """
            {"application-identifier": "\(teamA).app1", "keychain-access-groups": ["\(teamA).one", "\(teamA).shared"],
             "com.apple.security.application-groups": ["group.shared"]}
            """)
        try fixture.signedApp("a2", identity: identityA, entitlements: """
            {"application-identifier": "\(teamA).app2", "keychain-access-groups": ["\(teamA).two", "\(teamA).shared"],
             "com.apple.security.application-groups": ["group.shared"]}
            """)
        try fixture.signedApp("b", identity: identityB, entitlements: """
            {"application-identifier": "\(teamB).app", "keychain-access-groups": ["\(teamB).one"]}
            """)
        try fixture.signedApp("none", identity: identityA, entitlements: "{}")
        try fixture.app("u")
    }

    @Test func eachAppSeesOnlyItsGroups() throws {
        #expect(try fixture.run("a1", "add", "x1", "from-a1").status == 0)
        #expect(try fixture.run("b", "add", "y1", "from-b").status == 0)
        #expect(try fixture.run("u", "add", "z1", "from-u").status == 0)

        // Adds go to element 0 of each caller's groups.
        let a1 = try fixture.run("a1", "find", "x1")
        #expect(a1.status == 0 && a1.group == "\(teamA).one" && a1.data == "from-a1", "\(a1)")
        #expect(try fixture.run("b", "find", "y1").group == "\(teamB).one")
        let unsignedGroup = try #require(try fixture.run("u", "find", "z1").group)
        #expect(unsignedGroup.hasPrefix("unsigned."))

        // Another app's item is not found, not refused: its existence is not revealed.
        for (app, account) in [("a2", "x1"), ("b", "x1"), ("u", "x1"), ("a1", "y1"), ("a2", "y1"), ("u", "y1"), ("a1", "z1"), ("b", "z1")] {
            #expect(try fixture.run(app, "find", account).status == OSStatusCode.itemNotFound.rawValue, "\(app) found \(account)")
        }
        #expect(try fixture.run("a1", "list").items == ["x1@\(teamA).one"])
        #expect(try fixture.run("b", "list").items == ["y1@\(teamB).one"])
        #expect(try fixture.run("u", "list").items == ["z1@\(unsignedGroup)"])
    }

    @Test func appsOfOneTeamShareTheirGroups() throws {
        #expect(try fixture.run("a1", "add", "s", "shared-secret", "\(teamA).shared").status == 0)
        #expect(try fixture.run("a1", "add", "g", "app-group-secret", "group.shared").status == 0)
        let viaKeychainGroup = try fixture.run("a2", "find", "s")
        #expect(viaKeychainGroup.group == "\(teamA).shared" && viaKeychainGroup.data == "shared-secret", "\(viaKeychainGroup)")
        let viaAppGroup = try fixture.run("a2", "find", "g", "group.shared")
        #expect(viaAppGroup.data == "app-group-secret", "\(viaAppGroup)")
        #expect(try fixture.run("a2", "delete", "s").status == 0)
        #expect(try fixture.run("a1", "find", "s").status == OSStatusCode.itemNotFound.rawValue)
        #expect(try fixture.run("b", "find", "g").status == OSStatusCode.itemNotFound.rawValue)
    }

    @Test func unentitledGroupsAreMissingEntitlement() throws {
        #expect(try fixture.run("a1", "add", "s", "v", "\(teamA).shared").status == 0)
        for (app, group) in [("b", "\(teamA).shared"), ("u", "\(teamA).shared"), ("a1", "\(teamB).one"), ("a2", "\(teamA).one"), ("b", "group.shared")] {
            #expect(try fixture.run(app, "find", "s", group).status == OSStatusCode.missingEntitlement.rawValue, "\(app) in \(group)")
            #expect(try fixture.run(app, "add", "t", "v", group).status == OSStatusCode.missingEntitlement.rawValue, "\(app) adding to \(group)")
        }
        let unsignedGroup = try #require(try { _ = try fixture.run("u", "add", "z", "v"); return try fixture.run("u", "find", "z").group }())
        #expect(try fixture.run("a1", "find", "z", unsignedGroup).status == OSStatusCode.missingEntitlement.rawValue)
    }

    @Test func aSignedAppEntitledToNoGroupCanDoNothing() throws {
        #expect(try fixture.run("none", "add", "n", "v").status == OSStatusCode.missingEntitlement.rawValue)
        #expect(try fixture.run("none", "find", "n").status == OSStatusCode.missingEntitlement.rawValue)
        #expect(try fixture.run("none", "list").status == OSStatusCode.missingEntitlement.rawValue)
    }

    @Test func removingTheRootsCertificateUnsignsItsApps() throws {
        #expect(try fixture.run("a1", "add", "x", "v", "\(teamA).one").status == 0)
        try FileManager.default.removeItem(atPath: DeveloperRoots.userDirectory(home: fixture.keychain.home) + "/" + DeveloperRoots.localRootFileName)
        #expect(try fixture.run("a1", "find", "x", "\(teamA).one").status == OSStatusCode.missingEntitlement.rawValue)
        #expect(fixture.daemonLog.contains("not issued by a trusted developer root"))
    }

    @Test func resigningAnAppChangesItsGroups() throws {
        #expect(try fixture.run("a1", "add", "x", "v").status == 0)
        let identityA = fixture.directory + "/identity-" + teamA
        try fixture.signedApp("a1", identity: identityA, entitlements: #"{"keychain-access-groups": ["\#(teamA).other"]}"#)
        #expect(try fixture.run("a1", "find", "x").status == OSStatusCode.itemNotFound.rawValue)
        #expect(try fixture.run("a1", "add", "y", "v").status == 0)
        #expect(try fixture.run("a1", "list").items == ["y@\(teamA).other"])
    }
}

/// The `security` installed beside securityd: its own group, every item's attributes,
/// and another application's secret or item only with the user's presence.
@Suite struct SecurityToolReachTests {
    let fixture: SignedAppsFixture

    init() throws {
        fixture = try SignedAppsFixture()
        let identityA = try fixture.identity(team: teamA)
        try fixture.signedApp("a1", identity: identityA, entitlements: #"{"keychain-access-groups": ["\#(teamA).one"]}"#)
        #expect(try fixture.run("a1", "add", "x1", "app-secret").status == 0)
    }

    func security(_ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: fixture.environment, input: input)
    }

    @Test func withAPasscodeAnotherAppsSecretNeedsIt() throws {
        #expect(try security("set-keychain-password", input: "1234\n1234\n").status == 0)
        // Attributes: no password asked.
        let listed = try security("find-generic-password", "-s", "probe", "-a", "x1")
        #expect(listed.status == 0 && listed.stdout.contains(#""acct"<blob>="x1""#), "\(listed.stderr)")
        // The secret: the password, verified by the enclave.
        let refused = try security("find-generic-password", "-s", "probe", "-a", "x1", "-w", input: "0000\n")
        #expect(refused.status == 51 && !refused.stdout.contains("app-secret"))
        let granted = try security("find-generic-password", "-s", "probe", "-a", "x1", "-w", input: "1234\n")
        #expect(granted.stdout == "app-secret\n", "\(granted.stderr)")
        // Deleting another app's item, likewise.
        #expect(try security("delete-generic-password", "-s", "probe", "-a", "x1").status != 0)
        #expect(try fixture.run("a1", "find", "x1").data == "app-secret")
        #expect(try security("delete-generic-password", "-s", "probe", "-a", "x1", input: "1234\n").status == 0)
        #expect(try fixture.run("a1", "find", "x1").status == OSStatusCode.itemNotFound.rawValue)
        // Its own items need nothing.
        #expect(try security("add-generic-password", "-s", "probe", "-a", "mine", "-w", "tool-secret").status == 0)
        #expect(try security("find-generic-password", "-s", "probe", "-a", "mine", "-w").stdout == "tool-secret\n")
        #expect(try fixture.run("a1", "find", "mine").status == OSStatusCode.itemNotFound.rawValue, "the tool's group is its own")
    }

    @Test func withoutAPasscodeThereIsNobodyToAsk() throws {
        #expect(try security("find-generic-password", "-s", "probe", "-a", "x1", "-w").stdout == "app-secret\n")
    }

    @Test func aCopyOfTheToolElsewhereIsJustAnUnsignedApp() throws {
        let copy = fixture.directory + "/security-copy"
        try CommandRunner.copyExecutable(CommandRunner.productsDirectory.appendingPathComponent("security").path, to: copy)
        let result = try CommandRunner.run(executable: copy, ["find-generic-password", "-s", "probe", "-a", "x1"], environment: fixture.environment)
        #expect(result.status == 44, "\(result.stderr)")
        let issue = try CommandRunner.run(
            executable: copy, ["create-developer-identity", "--team", teamB, "--out", fixture.directory + "/copy-identity"], environment: fixture.environment)
        #expect(issue.status == 30, "errSecMissingEntitlement's low byte: \(issue.stderr)")
    }

    @Test func aPreloadedToolLosesItsRole() throws {
        let preloaded = try CommandRunner.run(
            "security", ["find-generic-password", "-s", "probe", "-a", "x1"],
            environment: fixture.environment.merging(["LD_PRELOAD": "libm.so.6"]) { _, new in new })
        #expect(preloaded.status == 44, "\(preloaded.stderr)")
        #expect(fixture.daemonLog.contains("the security tool's role cannot vouch for the process: it was started with LD_PRELOAD"))
    }

    @Test func issuingWithAPasscodeNeedsIt() throws {
        #expect(try security("set-keychain-password", input: "1234\n1234\n").status == 0)
        #expect(try security("create-developer-identity", "--team", teamB, "--out", fixture.directory + "/b1").status != 0)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/b1/identity.pem"))
        let issued = try security("create-developer-identity", "--team", teamB, "--out", fixture.directory + "/b2", input: "1234\n")
        #expect(issued.status == 0, "\(issued.stderr)")
    }

    @Test func applicationsCannotManageTheKeychain() throws {
        let client = try fixture.keychain.connect()  // this test process: an unsigned application
        #expect(osStatus { try client.call(Service.IssueDeveloperCertificate(
            team: teamA, applicationGroups: [], publicKey: P256.Signing.PrivateKey().publicKey.rawRepresentation)) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try client.call(Service.UpdateSettings(autoLockSeconds: 1)) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try client.call(Service.ChangePasscode(old: nil, new: SecretBytes(Array("1".utf8)))) } == OSStatusCode.missingEntitlement)
    }
}
