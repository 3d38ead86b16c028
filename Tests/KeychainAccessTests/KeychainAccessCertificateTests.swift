import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A certificate's page in the real window and browser: its chain, trust for one policy,
/// export as PEM and as a PKCS#12 file (checked with openssl), copying a password to the
/// clipboard, and the System keychain (its own securityd) in the sidebar, read-only.
@Suite(.requires("dbus-daemon", "secret-tool", "curl", "openssl"), .enabled(if: Chromium.isInstalled, "needs Debian's chromium (scripts/install-deps)"))
final class KeychainAccessCertificateTests {
    let bus: SessionBus
    let system: SystemKeychainDaemon
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SecurityToolTests/Golden/fixtures").path
    let passcode = "1234"

    init() throws {
        bus = try SessionBus(daemonEnvironment: ["TROUSSEAU_SECURITYD_IDLE_SECONDS": "600"])
        try FileManager.default.createDirectory(atPath: bus.directory + "/machine/run", withIntermediateDirectories: true)
        system = try SystemKeychainDaemon(directory: bus.directory + "/machine")
    }

    deinit { system.stop() }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": bus.keychain.home, "TROUSSEAU_SYSTEM_SOCKET": system.socket])
    }

    func failedUnlocks() throws -> String {
        try security("show-keychain-info").stdout.split(separator: "\n").first { $0.hasPrefix("failed unlocks:") }.map(String.init) ?? ""
    }

    /// Posts the page's export form with `format` (and the form's other fields changed by
    /// `fields`) from the page, as its Export button does; the answer's type and bytes.
    func export(_ page: Chromium.Page, format: String, fields: [String: String] = [:]) throws -> (type: String, disposition: String, bytes: Data) {
        let overrides = String(decoding: try JSONSerialization.data(withJSONObject: fields.merging(["format": format]) { _, new in new }), as: UTF8.self)
        let answer = try page.evaluate("""
            (async () => {
              const form = document.querySelector('form.export');
              const body = new URLSearchParams(new FormData(form));
              for (const [name, value] of Object.entries(\(overrides))) body.set(name, value);
              const response = await fetch(form.action, { method: 'POST', body });
              const bytes = new Uint8Array(await response.arrayBuffer());
              let binary = '';
              for (const byte of bytes) binary += String.fromCharCode(byte);
              return [response.headers.get('content-type') || '', response.headers.get('content-disposition') || '', btoa(binary)];
            })()
            """) as? [String] ?? []
        try #require(answer.count == 3)
        return (answer[0], answer[1], Data(base64Encoded: answer[2]) ?? Data())
    }

    @Test func aCertificatesChainTrustPerPolicyExportAndTheSystemKeychain() throws {
        // An identity whose root is trusted; a password to copy; a certificate in System.
        try #require(try security("import", fixtures + "/signing.p12", "-P", "golden").status == 0)
        try #require(try security("add-trusted-cert", fixtures + "/signing-root.pem").status == 0)
        try #require(try security("add-generic-password", "-s", "github.com", "-a", "alice", "-w", "hunter2").status == 0)
        let systemAdded = try security("add-certificates", "-k", "/Library/Keychains/System.keychain", fixtures + "/signing-root.pem")
        try #require(systemAdded.status == 0, "\(systemAdded.stderr)")
        try #require(try security("set-keychain-password", "-p", passcode).status == 0)

        let window = try WindowProcess(
            home: bus.keychain.home, directory: bus.directory, environment: ["TROUSSEAU_SYSTEM_SOCKET": system.socket, "TROUSSEAU_SYSTEM_HOME": system.home])
        let browser = try Chromium(directory: bus.directory)
        let page = try browser.newPage()
        try page.navigate(try #require(window.launchURL))
        try page.wait("document.querySelector('#items')")

        // The leaf's page: its chain, root first, valid under the user's trust in the root.
        try page.navigate(window.origin + "/?keychain=login&category=my-certificates")
        let leaf = try page.evaluate("Array.from(document.querySelectorAll('#items tbody a')).map((a) => a.textContent).find((t) => t.includes('Golden Tester'))") as? String
        try page.click("#items tbody a", text: try #require(leaf, "the identity is listed under My Certificates"))
        try page.wait("document.querySelector('#chain')")
        let chain = try page.evaluate("Array.from(document.querySelectorAll('#chain li')).map((li) => li.textContent)") as? [String] ?? []
        #expect(chain.count == 2 && chain.first?.contains("Golden Signing Root") == true && chain.last?.contains("Golden Tester") == true, "\(chain)")
        #expect(try page.text("#verdict") == "This certificate is valid")
        let screenshots = ProcessInfo.processInfo.environment["KEYCHAIN_ACCESS_SCREENSHOTS"] ?? bus.directory
        try page.evaluate("document.querySelector('#chain').scrollIntoView()")
        try page.screenshot(to: screenshots + "/07-certificate-chain.png")

        // Exported as PEM: the certificate openssl reads; as .p12 only with the keychain password.
        let pem = try export(page, format: "pem")
        #expect(pem.type == "application/x-pem-file" && pem.disposition.hasPrefix("attachment; filename=\"") && pem.disposition.hasSuffix(".pem\""), "\(pem.disposition)")
        let pemText = String(decoding: pem.bytes, as: UTF8.self)
        let pemFile = bus.directory + "/exported.pem"
        try pem.bytes.write(to: URL(fileURLWithPath: pemFile))
        #expect(try CommandRunner.run(executable: "/usr/bin/openssl", ["x509", "-in", pemFile, "-noout", "-subject"]).stdout.contains("Golden Tester"))
        let refused = try export(page, format: "p12", fields: ["passphrase": "export-pw", "passcode": "0000"])
        #expect(refused.type.hasPrefix("text/html"), "a wrong keychain password gives no file: \(refused.type)")
        #expect(String(decoding: refused.bytes, as: UTF8.self).contains("id=\"failure\""))
        #expect(try failedUnlocks() == "failed unlocks: 1", "it counts in the enclave's throttle")
        let p12 = try export(page, format: "p12", fields: ["passphrase": "export-pw", "passcode": passcode])
        #expect(p12.type == "application/x-pkcs12", "\(p12.type): \(String(decoding: p12.bytes.prefix(400), as: UTF8.self))")
        let p12File = bus.directory + "/exported.p12"
        try p12.bytes.write(to: URL(fileURLWithPath: p12File))
        let opened = try CommandRunner.run(executable: "/usr/bin/openssl", ["pkcs12", "-in", p12File, "-passin", "pass:export-pw", "-nodes"])
        #expect(opened.status == 0 && opened.stdout.contains("-----BEGIN PRIVATE KEY-----"), "\(opened.stderr)")
        let body = pemText.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(opened.stdout.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined().contains(body), "the same certificate beside the key")
        #expect(try CommandRunner.run(executable: "/usr/bin/openssl", ["pkcs12", "-in", p12File, "-passin", "pass:wrong", "-nodes"]).status != 0)

        // The root set to Never Trust for code signing only: codeSign fails, basic holds.
        try page.navigate(window.origin + "/?keychain=login&category=certificates")
        try page.click("#items tbody a", text: "Golden Signing Root")
        try page.wait("document.querySelector('#trust-codeSign')")
        #expect(try page.evaluate("document.querySelector('#trust').value") as? String == "always-trust", "add-trusted-cert's setting, read back")
        try page.evaluate("document.querySelector('#trust-codeSign').value = 'never-trust'")
        try page.type("#trust-passcode", passcode)
        try page.click("#save-trust")
        try page.wait("document.querySelector('#banner').textContent.includes('Custom Settings')")
        #expect(try page.evaluate("document.querySelector('#trust-codeSign').value") as? String == "never-trust")
        #expect(try page.evaluate("document.querySelector('#trust-ssl').value") as? String == "system-defaults")
        let codeSign = try security("verify-cert", "-c", fixtures + "/signing.cer", "-p", "codeSign")
        #expect(codeSign.status != 0 && codeSign.stdout.contains("CSSMERR_APPLETP_TRUST_SETTING_DENY"), "\(codeSign.stdout)")
        let basic = try security("verify-cert", "-c", fixtures + "/signing.cer", "-p", "basic")
        #expect(basic.status == 0, "the root is still trusted for the other policies: \(basic.stdout)\(basic.stderr)")
        let dumped = try security("dump-trust-settings").stdout
        #expect(dumped.contains("Code Signing") && dumped.contains("kSecTrustSettingsResultDeny"), "\(dumped)")

        // System, its own daemon's: listed, read-only.
        try page.navigate(window.origin + "/?keychain=system")
        try page.wait("document.querySelector('#items')")
        #expect(try page.text(".lockstate[data-keychain=system]") == "read-only")
        let systemNames = try page.evaluate("Array.from(document.querySelectorAll('#items tbody a')).map((a) => a.textContent)") as? [String] ?? []
        #expect(systemNames == ["Golden Signing Root"], "\(systemNames)")
        try page.click("#items tbody a", text: "Golden Signing Root")
        try page.wait("document.querySelector('#item-title')")
        #expect(try page.evaluate("document.querySelector('form.delete') === null") as? Bool == true, "no Delete in System")
        // Its daemon stopped: the sidebar and the page say so.
        system.stop()
        try page.navigate(window.origin + "/?keychain=system")
        try page.wait("document.querySelector('#failure')")
        #expect(try page.text(".lockstate[data-keychain=system]") == "not running")
        let failure = try page.text("#failure")
        #expect(failure.contains("not running"), "\(failure)")

        // Copy to the clipboard: the keychain password first; cleared 30 s later.
        try browser.send("Browser.grantPermissions", ["permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"], "origin": window.origin])
        try browser.send("Emulation.setFocusEmulationEnabled", session: page.session, ["enabled": true])
        try page.navigate(window.origin + "/")
        try page.click("#items tbody a", text: "github.com")
        try page.wait("document.querySelector('#copy-secret')")
        try page.click("#copy-secret")
        try page.wait("document.querySelector('#reveal-dialog').open")
        try page.type("#reveal-passcode", passcode)
        try page.click("#reveal-allow")
        try page.wait("document.querySelector('#banner').textContent.includes('Copied')")
        #expect(try page.evaluate("navigator.clipboard.readText()") as? String == "hunter2")
        #expect(try page.text("#secret") == "", "copied, not shown")
        let deadline = Date().addingTimeInterval(45)
        while try page.evaluate("navigator.clipboard.readText()") as? String != "", Date() < deadline { sleep(1) }
        #expect(try page.evaluate("navigator.clipboard.readText()") as? String == "", "the clipboard is cleared after 30 seconds")
    }
}
