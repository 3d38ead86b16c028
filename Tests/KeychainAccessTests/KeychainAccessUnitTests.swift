import Foundation
@testable import KeychainAccess
import KeychainProtocol
import Testing

/// The window's parts that need no process: escaping, the kernel's socket table, health.
@Suite struct KeychainAccessUnitTests {
    /// A quote followed by a combining mark is one Character but still a quote: escaped
    /// (swift-mustache's own HTML escaping, by Character, let it through).
    @Test func everyQuoteIsEscapedWhateverFollowsIt() {
        let name = "x\"\u{301} autofocus onfocus=alert(1) '\u{301}<b>"
        let page = WindowTemplates.render(["title": name, "csrf": "t", "keychainID": "login"])
        #expect(!page.contains("\"\u{301}") && !page.contains("'\u{301}") && !page.contains("<b>"))
        #expect(page.contains("x&quot;\u{301} autofocus"))
        #expect(ScalarHTML().escapeText("é<日>&\"'x\u{1F511}") == "é&lt;日&gt;&amp;&quot;&#39;x\u{1F511}", "by byte is by scalar")
        #expect(ScalarHTML().escapeText("日本語 key") == "日本語 key")
    }

    /// `/proc/net/tcp`: the socket from 127.0.0.1:40000 to 127.0.0.1:8080 is uid 1000's;
    /// the listening socket and our own end are not it.
    @Test func theOwnerOfALoopbackPeerIsReadFromTheKernelsTable() {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1 0 100 0 0 10 0
               1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 12 1 0 20 4 30 10 -1
               2: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 13 1 0 20 4 30 10 -1

            """
        #expect(LoopbackPeer.owner(in: table, peerPort: 40000, port: 8080) == 1000)
        #expect(LoopbackPeer.owner(in: table, peerPort: 40001, port: 8080) == nil)
        #expect(LoopbackPeer.owner(in: table, peerPort: 8080, port: 40000) == 0)
    }

    @Test func reusedAndWeakPasswordsAreFoundWithoutShowingThem() {
        func item(_ id: String, _ name: String) -> WindowItem {
            WindowItem(id: id, itemClass: "genp", attributes: ["labl": .string(name)], keychain: "login")
        }
        let report = HealthReport(
            items: [item("a", "one"), item("b", "two"), item("c", "three")],
            secrets: ["a": Data("hunter2".utf8), "b": Data("hunter2".utf8), "c": Data("vX9#qL2!mR7$wK4@".utf8)])
        let titles = report.findings.map(\.title)
        #expect(titles == ["Reused passwords", "Weak passwords"])
        #expect(report.findings[0].entries.map(\.name) == ["one", "two"])
        #expect(report.findings[1].entries.map(\.name) == ["one", "two"])
        #expect(!report.findings.flatMap(\.entries).map(\.detail).joined().contains("hunter2"))
    }

    /// Trust settings are read in order (the first constraint that applies decides) and
    /// written back with the same meaning; settings the window does not show (a host name,
    /// an application, another policy, or one an earlier constraint shadows) are kept after
    /// the window's own, so that what the window shows is what the evaluation decides.
    @Test func trustSettingsKeepTheirMeaningThroughTheWindow() {
        let deny = TrustUsageConstraint(result: .deny), root = TrustUsageConstraint(result: .trustRoot)
        let host = TrustUsageConstraint(policy: "ssl", policyString: "example.org", result: .deny)
        let smime = TrustUsageConstraint(policy: "smime", result: .trustRoot)
        let sslTrust = TrustUsageConstraint(policy: "ssl", result: .trustRoot), codeSignDeny = TrustUsageConstraint(policy: "codeSign", result: .deny)
        let application = TrustUsageConstraint(application: "/usr/bin/foo")
        // Saved again unchanged, every record means what it meant.
        for record in [[codeSignDeny, host, smime, root], [deny, root], [deny, sslTrust], [sslTrust, codeSignDeny, deny], [application], [host], [codeSignDeny, root]] {
            #expect(CertificateTrust(record).constraints(selfSigned: true) == record, "\(record)")
        }
        let read = CertificateTrust([codeSignDeny, host, smime, root])
        #expect(read.overall == .systemDefaults && read.policies == ["codeSign": .neverTrust] && read.kept == [host, smime, root])
        let shadowed = CertificateTrust([deny, sslTrust])
        #expect(shadowed.overall == .neverTrust && shadowed.policies.isEmpty && shadowed.kept == [sslTrust], "an SSL choice after Never Trust decides nothing")
        // `add-trusted-cert -a`: a constraint securityd applies to every evaluation. Never Trust
        // from the window comes first and decides.
        var denied = CertificateTrust([application])
        #expect(denied.overall == .systemDefaults && denied.kept == [application])
        denied.overall = .neverTrust
        #expect(denied.constraints(selfSigned: true) == [deny, application])
        var chosen = CertificateTrust([host])
        chosen.policies["ssl"] = .alwaysTrust
        chosen.overall = .neverTrust
        #expect(chosen.constraints(selfSigned: true) == [sslTrust, deny, host])
        #expect(CertificateTrust([]).overall == .alwaysTrust, "no constraints: a root for everything")
        #expect(CertificateTrust(overall: .alwaysTrust).constraints(selfSigned: true) == [], "written as Apple writes it")
        #expect(CertificateTrust(overall: .alwaysTrust).constraints(selfSigned: false) == [TrustUsageConstraint(result: .trustAsRoot)])
        #expect(CertificateTrust(overall: .systemDefaults).constraints(selfSigned: true) == nil, "no settings: removed")
    }

    /// An exported file's name comes from the item's: nothing that ends the header's quoted
    /// string or names a directory.
    @Test func anExportedFilesNameIsSafeInTheHeader() {
        #expect(WindowRoutes.fileName("Golden Tester (GOLDEN1234)") == "Golden Tester _GOLDEN1234_")
        #expect(WindowRoutes.fileName("a\"\r\nSet-Cookie: x/../y") == "a___Set-Cookie_ x_.._y")
        #expect(WindowRoutes.fileName("..") == "certificate")
        #expect(WindowRoutes.fileName("日本") == "__")
    }
}
