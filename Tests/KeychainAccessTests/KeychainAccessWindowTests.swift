import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Keychain Access window end to end: a real `keychain-access`, securityd (activated on a
/// real session bus, as the Secret Service) and enclave, driven by Debian's Chromium over the
/// DevTools protocol as a person would — mouse clicks, typing, a file chosen — and checked
/// with the `security` tool. Each step saves a screenshot under the test's directory
/// (`KEYCHAIN_ACCESS_SCREENSHOTS` names another).
@Suite(.requires("dbus-daemon", "secret-tool", "curl"), .enabled(if: Chromium.isInstalled, "needs Debian's chromium (scripts/install-deps)"))
final class KeychainAccessWindowTests {
    let bus: SessionBus
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SecurityToolTests/Golden/fixtures").path
    let screenshots: String
    let passcode = "1234"

    init() throws {
        bus = try SessionBus(daemonEnvironment: ["TROUSSEAU_SECURITYD_IDLE_SECONDS": "600"])
        screenshots = ProcessInfo.processInfo.environment["KEYCHAIN_ACCESS_SCREENSHOTS"] ?? bus.directory + "/screenshots"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": bus.keychain.home])
    }

    /// A keychain with what a user has: a password from `security`, one from a Secret Service
    /// client, a trusted root certificate, a configuration profile; then a keychain password.
    func populate() throws {
        let stored = try bus.secretTool("store", "--label=Wi-Fi at home", "service", "wifi", "user", "home", input: "ss-secret")
        try #require(stored.status == 0, "\(stored.stderr)")
        try #require(try security("add-generic-password", "-s", "github.com", "-a", "alice", "-w", "hunter2").status == 0)
        try #require(try security("add-internet-password", "-s", "mail.example.org", "-a", "carol", "-r", "imap", "-w", "old-mail").status == 0)
        try #require(try security("add-trusted-cert", fixtures + "/signing-root.pem").status == 0)
        try #require(try security("import", fixtures + "/signing-root.pem").status == 0)
        try #require(try security("verify-cert", "-c", fixtures + "/signing.cer", "-p", "codeSign", "-q").status == 0)
        let installed = try security("profiles", "install", fixtures + "/office.mobileconfig")
        try #require(installed.status == 0, "\(installed.stderr)")
        try #require(try security("set-keychain-password", "-p", passcode).status == 0)
    }

    func failedUnlocks() throws -> String {
        try security("show-keychain-info").stdout.split(separator: "\n").first { $0.hasPrefix("failed unlocks:") }.map(String.init) ?? ""
    }

    @Test func theWindowDoesWhatKeychainAccessDoes() throws {
        try populate()
        let window = try WindowProcess(home: bus.keychain.home, directory: bus.directory)
        let browser = try Chromium(directory: bus.directory)
        let page = try browser.newPage()
        let launch = try #require(window.launchURL)

        // The link opens the window once; the token leaves the address bar.
        try page.navigate(launch)
        try page.wait("document.querySelector('#items')")
        #expect(try page.evaluate("location.href") as? String == window.origin + "/")
        let names = try page.evaluate("Array.from(document.querySelectorAll('#items tbody a')).map((a) => a.textContent)") as? [String] ?? []
        #expect(names.contains("github.com") && names.contains("Wi-Fi at home"), "\(names)")
        try page.screenshot(to: screenshots + "/01-all-items.png")
        let second = try browser.newPage()
        try second.navigate(launch)
        #expect(try second.text("body").contains("This link has been used"))
        try second.close()

        // Search as you type.
        try page.type("#search", "git")
        try page.wait("Array.from(document.querySelectorAll('#items tbody tr')).filter((r) => !r.hidden).length === 1")
        #expect(try page.text("#count") == "1 items")

        // An item: its attributes, and a reveal that takes the keychain password every time.
        try page.click("#items tbody a", text: "github.com")
        try page.wait("document.querySelector('#item-title')?.textContent === 'github.com'")
        #expect(try page.text("dl.attributes").contains("kSecAttrAccount"))
        #expect(try page.text("dl.attributes").contains("alice"))
        #expect(!(try page.evaluate("document.documentElement.outerHTML") as? String ?? "").contains("hunter2"), "no secret before a reveal")
        try page.click("#show-secret")
        try page.wait("document.querySelector('#reveal-dialog').open")
        try page.type("#reveal-passcode", "0000")
        try page.click("#reveal-allow")
        try page.wait("document.querySelector('#reveal-error').textContent.length > 0")
        #expect(try page.text("#secret") == "")
        #expect(try failedUnlocks() == "failed unlocks: 1", "the wrong password counts in the enclave's throttle")
        try page.screenshot(to: screenshots + "/02-wrong-password.png")
        try page.type("#reveal-passcode", passcode)
        try page.click("#reveal-allow")
        try page.wait("document.querySelector('#secret').textContent === 'hunter2'")
        try page.screenshot(to: screenshots + "/03-item-revealed.png")

        // A secure note added, and a password edited; `security` reads both.
        try page.click("a.button", text: "New Secure Note")
        try page.wait("document.querySelector('#editor-title')")
        try page.type("#name", "Server notes")
        try page.type("#secret-field", "rack 4, shelf 2")
        try page.click("#save")
        try page.wait("document.querySelector('#banner').textContent.includes('Added')")
        #expect(try security("find-generic-password", "-s", "Server notes", "-w").stdout == "rack 4, shelf 2\n")
        #expect(try page.text("#items tbody td:nth-child(2)") == "secure note")
        try edit(page, at: window.origin, item: "github.com", secret: "correct horse battery staple")
        #expect(try security("find-generic-password", "-s", "github.com", "-w").stdout == "correct horse battery staple\n")
        // An Internet password (no service attribute) edited too; its server stays.
        try edit(page, at: window.origin, item: "mail.example.org", secret: "new-mail")
        #expect(try security("find-internet-password", "-s", "mail.example.org", "-w").stdout == "new-mail\n")

        // Locked from the page: `security` is refused; unlocked from the page again.
        try page.navigate(window.origin + "/")
        try page.click("#lock")
        try page.wait("document.querySelector('#unlock-password')")
        let refused = try security("find-generic-password", "-s", "github.com", "-w")
        #expect(refused.status != 0 && refused.stderr.contains("User interaction is not allowed"), "\(refused.stderr)")
        try page.screenshot(to: screenshots + "/04-locked.png")
        try page.type("#unlock-password", passcode)
        try page.click("#unlock")
        try page.wait("document.querySelector('#lock')")
        #expect(try security("find-generic-password", "-s", "github.com", "-w").status == 0)
        try page.type("#lock-minutes", "5")
        try page.click("#save-settings")
        try page.wait("document.querySelector('#banner').textContent.includes('Settings saved')")
        #expect(try security("show-keychain-info").stderr.contains("timeout=300s"))

        // A certificate set to Never Trust: `security verify-cert` then fails.
        try page.navigate(window.origin + "/?keychain=login&category=certificates")
        try page.click("#items tbody a", text: "Golden Signing Root")
        try page.wait("document.querySelector('#trust')")
        #expect(try page.text("dl.attributes").contains("SHA-256 fingerprint") || page.text("article").contains("SHA-256 fingerprint"))
        try page.evaluate("document.querySelector('#trust').value = 'never-trust'")
        try page.type("#trust-passcode", passcode)
        try page.click("#save-trust")
        try page.wait("document.querySelector('#banner').textContent.includes('Never Trust')")
        try page.screenshot(to: screenshots + "/05-certificate.png")
        let verified = try security("verify-cert", "-c", fixtures + "/signing.cer", "-p", "codeSign")
        #expect(verified.status != 0 && verified.stdout.contains("CSSMERR_APPLETP_TRUST_SETTING_DENY"), "\(verified.stdout)")

        // A PKCS#12 file imported through the file input.
        try page.click("a.button", text: "Import Items")
        try page.wait("document.querySelector('#import-file')")
        try page.setFiles("#import-file", [fixtures + "/signing.p12"])
        try page.type("#import-passphrase", "golden")
        try page.click("#import")
        try page.wait("document.querySelector('#import-result').textContent.length > 0")
        let imported = try page.text("#import-result")
        #expect(imported.contains("1 identity"), "\(imported)")
        #expect(try security("find-identity", "-p", "codesigning").stdout.contains("Golden"))

        // A configuration profile removed, with what it installed.
        try page.click("a.button", text: "Profiles")
        try page.wait("document.querySelector('article.profile')")
        try page.screenshot(to: screenshots + "/06-profiles.png")
        try page.click("article.profile input[name=confirm]")
        try page.type("article.profile input[name=passcode]", passcode)
        try page.click("article.profile button.danger")
        try page.wait("document.querySelector('#banner').textContent.includes('Removed')")
        let profiles = try security("profiles", "list")
        #expect(profiles.status == 0 && !profiles.stdout.contains("office"), "\(profiles.stdout)")

        try checkAccessibility(page, at: window.origin + "/")
        try checkAccessibility(page, at: window.origin + "/new?kind=password")
    }

    /// A Secret Service client refused — its secret asked for before the keychain is unlocked —
    /// is in the activity view with the program and the method, and nothing it asked for.
    @Test func secretServiceRefusalsAreInTheActivityView() throws {
        try #require(try bus.secretTool("store", "--label=Router", "service", "router", input: "amber-falcon-93").status == 0)
        try #require(try security("set-keychain-password", "-p", passcode).status == 0)
        // Locked as after a restart (the provider's items are readable after first unlock).
        DaemonControl.stop(home: bus.keychain.home)
        let script = """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            conn = open_dbus_connection(bus='SESSION')
            service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            session = conn.send_and_get_reply(new_method_call(service, 'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
            unlocked, locked = conn.send_and_get_reply(new_method_call(service, 'SearchItems', 'a{ss}', ({'service': 'router'},))).body
            item = DBusAddress(locked[0], bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Item')
            reply = conn.send_and_get_reply(new_method_call(item, 'GetSecret', 'o', (session,)))
            print(reply.header.message_type.name, reply.body)
            """
        var environment = bus.clientEnvironment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let refused = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", script], environment: environment, clearing: true)
        #expect(refused.stdout.hasPrefix("error") && refused.stdout.contains("locked"), "\(refused.stdout)\(refused.stderr)")

        let window = try WindowProcess(home: bus.keychain.home, directory: bus.directory)
        let cookie = try #require(try window.login(token: try window.tokenInRedirectFile()))
        let activity = try window.http("GET", "/activity", cookie: cookie).body
        #expect(activity.contains("<td>Secret Service GetSecret</td>") && activity.contains("python3"), "\(activity)")
        #expect(activity.contains("User interaction is not allowed."))
        #expect(!activity.contains("router") && !activity.contains("amber"), "not the item it asked for")
    }

    /// Opens `item` from the list, edits its secret and saves.
    func edit(_ page: Chromium.Page, at origin: String, item: String, secret: String) throws {
        try page.navigate(origin + "/")
        try page.click("#items tbody a", text: item)
        try page.wait("document.querySelector('#item-title')")
        try page.click("a.button", text: "Edit")
        try page.wait("document.querySelector('#editor-title')")
        try page.type("#secret-field", secret)
        try page.click("#save")
        try page.wait("document.querySelector('#banner').textContent.includes('Saved')")
    }

    /// Every control has a role and a name in the accessibility tree, and Tab reaches each.
    func checkAccessibility(_ page: Chromium.Page, at url: String) throws {
        try page.navigate(url)
        let controls = ["button", "link", "textbox", "searchbox", "checkbox", "combobox", "listbox"]
        let unnamed = try page.accessibilityNodes().filter { !$0.ignored && controls.contains($0.role) && $0.name.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(unnamed.isEmpty, "controls without a name at \(url): \(unnamed)")
        let interactive = """
            Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea'))
              .filter((e) => e.offsetParent !== null && !e.closest('dialog:not([open])'))
            """
        let count = try page.evaluate("(\(interactive)).length") as? Int ?? 0
        try page.evaluate("window.reached = new Set(); document.addEventListener('focusin', (e) => window.reached.add(e.target))")
        try page.evaluate("document.activeElement?.blur()")
        for _ in 0..<(count + 5) { try page.press("Tab") }
        let missed = try page.evaluate("(\(interactive)).filter((e) => !window.reached.has(e)).map((e) => e.outerHTML.slice(0, 80))") as? [String] ?? ["?"]
        #expect(count > 5 && missed.isEmpty, "not reachable by Tab at \(url): \(missed)")
    }
}
