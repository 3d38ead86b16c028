import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Who can reach the window, tried the way an attacker would: pages of other origins in the
/// same browser (a `data:` page, and a second local server, which is the same *site* and so
/// gets the cookie), requests without the session or under another Host (DNS rebinding), the
/// launch token used twice — each leaving the keychain as it was (the wrong keychain password
/// the attacks carry would show in the throttle's count if one got through).
@Suite(.requires("curl"), .enabled(if: Chromium.isInstalled, "needs Debian's chromium (scripts/install-deps)"))
final class KeychainAccessAttackTests {
    let keychain: DaemonKeychain
    let passcode = "1234"

    init() throws {
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_SECURITYD_IDLE_SECONDS": "600"])
        _ = try keychain.connect()
        try #require(try security("add-generic-password", "-s", "github.com", "-a", "alice", "-w", "zebra-cobalt-7431").status == 0)
        try #require(try security("set-keychain-password", "-p", passcode).status == 0)
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
    }

    var itemIsThere: Bool { (try? security("find-generic-password", "-s", "github.com"))?.status == 0 }

    func failedUnlocks() throws -> String {
        try security("show-keychain-info").stdout.split(separator: "\n").first { $0.hasPrefix("failed unlocks:") }.map(String.init) ?? ""
    }

    @Test func pagesOfOtherOriginsChangeNothing() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory)
        let browser = try Chromium(directory: keychain.directory)
        let page = try browser.newPage()
        try page.navigate(try #require(window.launchURL))
        try page.wait("document.querySelector('#items tbody a')")
        let href = try #require(try page.evaluate("document.querySelector('#items tbody a').getAttribute('href')") as? String)
        let id = String(href.dropFirst("/item/".count).prefix { $0 != "?" })
        let csrf = try #require(try page.evaluate("document.querySelector('meta[name=csrf-token]').content") as? String)
        let target = window.origin

        // A data: page: an auto-submitted form, a fetch with credentials, a WebSocket.
        let attacker = try browser.newPage()
        let form = """
            <form method="post" action="\(target)/item/\(id)/delete"><input name="confirm" value="yes"><input name="keychain" value="login"></form>
            <script>document.forms[0].submit()</script>
            """
        try attacker.navigate("data:text/html," + form.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        try attacker.wait("location.href.startsWith('\(target)')")
        #expect(try attacker.text("body").contains("No session"), "the SameSite=Strict cookie is not sent from another site")
        #expect(itemIsThere)
        try attacker.navigate("data:text/html,<p>attacker</p>")
        let fetched = try attacker.evaluate("""
            fetch('\(target)/reveal', { method: 'POST', credentials: 'include', mode: 'no-cors',
              body: new URLSearchParams({ id: '\(id)', keychain: 'login', passcode: '0000', csrf: '\(csrf)' }) }).then(() => 'sent', (e) => 'failed')
            """) as? String
        #expect(fetched != nil)
        #expect(try failedUnlocks() == "failed unlocks: 0", "the cross-site reveal never reached the enclave")

        // A second local server: the same site (cookies ignore ports), another origin. Even with
        // the page's token leaked to it, the Origin check refuses.
        let served = keychain.directory + "/attacker"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        try """
            <!doctype html><form method="post" action="\(target)/item/\(id)/delete">
            <input name="confirm" value="yes"><input name="keychain" value="login"><input name="csrf" value="\(csrf)"></form>
            <script>document.forms[0].submit()</script>
            """.write(toFile: served + "/form.html", atomically: true, encoding: .utf8)
        try "<!doctype html><p>attacker</p>".write(toFile: served + "/blank.html", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let port = 20000 + Int.random(in: 0..<20000)
        server.arguments = ["-m", "http.server", "--bind", "127.0.0.1", "--directory", served, String(port)]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)  // it inherits the test's blocked SIGTERM
            server.waitUntilExit()
        }
        for _ in 0..<100 where (try? CommandRunner.run(executable: "/usr/bin/curl", ["-s", "-o", "/dev/null", "http://127.0.0.1:\(port)/blank.html"], clearing: true))?.status != 0 {
            usleep(50_000)
        }
        try attacker.navigate("http://127.0.0.1:\(port)/form.html")
        try attacker.wait("location.href.startsWith('\(target)')")
        #expect(try attacker.text("body").contains("did not come from the window's own page"))
        #expect(itemIsThere)
        try attacker.navigate("http://127.0.0.1:\(port)/blank.html")
        let reveal = try attacker.evaluate("""
            fetch('\(target)/reveal', { method: 'POST', credentials: 'include', headers: { 'X-CSRF-Token': '\(csrf)' },
              body: new URLSearchParams({ id: '\(id)', keychain: 'login', passcode: '0000' }) }).then((r) => r.status, (e) => 'blocked')
            """)
        #expect(reveal as? String == "blocked" || reveal as? Int == 403, "\(String(describing: reveal))")
        let socket = try attacker.evaluate("""
            new Promise((resolve) => { const s = new WebSocket('ws://127.0.0.1:\(window.port)/live');
              s.onmessage = () => resolve('heard'); s.onerror = () => resolve('refused'); s.onclose = () => resolve('refused'); })
            """) as? String
        #expect(socket == "refused")
        #expect(try failedUnlocks() == "failed unlocks: 0")
        #expect(itemIsThere)
        // The page itself still works (a control: the checks, not a broken window, refused).
        try page.navigate(target + "/")
        #expect(try page.text("#items").contains("github.com"))
    }

    @Test func requestsWithoutTheSessionOrUnderAnotherHostAreRefused() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory)
        let token = try #require(window.launchURL.flatMap { $0.split(separator: "=").last.map(String.init) })
        #expect(try window.http("GET", "/").status == 403)
        #expect(try window.http("GET", "/", host: "evil.example:\(window.port)").status == 421)
        let cookie = try #require(try window.login(token: token))
        #expect(try window.login(token: token) == nil, "the token works once")
        let page = try window.http("GET", "/", cookie: cookie)
        #expect(page.status == 200)
        let headers = page.headers.lowercased()
        #expect(headers.contains("cache-control: no-store"))
        #expect(headers.contains("content-security-policy: default-src 'none'; script-src 'self'"))
        #expect(headers.contains("frame-ancestors 'none'"))
        #expect(!page.body.contains("zebra-cobalt-7431"))
        // The icon the page shows is the one the desktop's menu is given.
        let packaged = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/desktop/trousseau-keychain-access.svg")
        #expect(try window.http("GET", "/assets/icon.svg", cookie: cookie).body == String(contentsOf: packaged, encoding: .utf8))
        let csrf = try #require(page.body.firstRange(of: "name=\"csrf-token\" content=\"").map { String(page.body[$0.upperBound...].prefix { $0.isHexDigit }) })
        let id = try #require(page.body.firstRange(of: "/item/").map { String(page.body[$0.upperBound...].prefix { $0.isHexDigit }) })
        let delete = "/item/\(id)/delete"
        let form = "confirm=yes&keychain=login&csrf=\(csrf)"
        // Each refused with the item untouched: no cookie; another Host (DNS rebinding) with
        // the cookie; no Origin; another Origin; no token.
        #expect(try window.http("POST", delete, origin: window.origin, form: form).status == 403)
        #expect(try window.http("POST", delete, host: "evil.example:\(window.port)", cookie: cookie, origin: window.origin, form: form).status == 421)
        #expect(try window.http("POST", delete, cookie: cookie, form: form).status == 403)
        #expect(try window.http("POST", delete, cookie: cookie, origin: "http://127.0.0.1:1", form: form).status == 403)
        #expect(try window.http("POST", delete, cookie: cookie, origin: window.origin, form: "confirm=yes&keychain=login").status == 403)
        #expect(try window.http("POST", delete, cookie: cookie, origin: window.origin, form: "confirm=yes&keychain=login&csrf=\(csrf.first == "0" ? "1" : "0")\(csrf.dropFirst())").status == 403)
        #expect(itemIsThere)
        // Browsers send the cookie to every port of 127.0.0.1, another user's server too: with
        // it, another user's process is still refused (the kernel says whose the socket is).
        if getuid() == 0 {
            let other = try CommandRunner.run(
                executable: "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                 "-H", "Cookie: keychain-access=\(cookie)", "http://127.0.0.1:\(window.port)/"], clearing: true)
            #expect(other.stdout == "403", "another user with the cookie: \(other.stdout) \(other.stderr)")
            #expect(try window.http("GET", "/", cookie: cookie).status == 200, "the user's own request still passes")
        }
        // A reveal needs the keychain password, the right one, and is never cached.
        let reveal = "/reveal"
        let noPassword = try window.http("POST", reveal, cookie: cookie, origin: window.origin, form: "id=\(id)&keychain=login&csrf=\(csrf)")
        #expect(noPassword.status == 403 && !noPassword.body.contains("zebra"))
        #expect(try failedUnlocks() == "failed unlocks: 0")
        let wrong = try window.http("POST", reveal, cookie: cookie, origin: window.origin, form: "id=\(id)&keychain=login&csrf=\(csrf)&passcode=0000")
        #expect(wrong.status == 403 && !wrong.body.contains("zebra"))
        #expect(try failedUnlocks() == "failed unlocks: 1")
        // The activity view lists the refusal — the program, the request, Apple's words — and
        // not the password it carried.
        let activity = try window.http("GET", "/activity", cookie: cookie).body
        #expect(activity.contains("keychain-access") && activity.contains("<td>CopyMatching</td>"), "\(activity)")
        #expect(activity.contains("The user name or passphrase you entered is not correct."))
        #expect(!activity.contains("0000") && !activity.contains("zebra"))
        let right = try window.http("POST", reveal, cookie: cookie, origin: window.origin, form: "id=\(id)&keychain=login&csrf=\(csrf)&passcode=\(passcode)")
        #expect(right.status == 200 && right.body == #"{"secret":"zebra-cobalt-7431"}"#)
        #expect(right.headers.lowercased().contains("cache-control: no-store"))
        // Everything right: the deletion goes through (the control for the refusals above).
        #expect(try window.http("POST", delete, cookie: cookie, origin: window.origin, form: form).status == 303)
        #expect(!itemIsThere)
    }

    @Test func theLaunchTokenIsTheUsersAloneAndWorksOnce() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory, browser: "/bin/true")
        #expect(window.launchURL == nil, "with a browser to open, the link is not printed")
        var file = stat(), directory = stat()
        #expect(stat(window.redirectFile, &file) == 0 && file.st_mode & 0o777 == 0o600)
        #expect(stat(String(window.redirectFile[..<window.redirectFile.lastIndex(of: "/")!]), &directory) == 0 && directory.st_mode & 0o077 == 0)
        let token = try window.tokenInRedirectFile()
        #expect(token.count == 64)
        #expect(try window.login(token: String(token.reversed())) == nil)
        #expect(try window.login(token: token) != nil)
        #expect(try window.login(token: token) == nil, "used once, the token is gone")
    }

    @Test func noSecretStaysInTheBrowserAfterARevealAndTheWindowLeavesWhenItsPagesAreClosed() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory, linger: 2)
        var browser: Chromium? = try Chromium(directory: keychain.directory)
        let page = try browser!.newPage()
        try page.navigate(try #require(window.launchURL))
        try page.click("#items tbody a", text: "github.com")
        try page.wait("document.querySelector('#show-secret')")
        try page.click("#show-secret")
        try page.wait("document.querySelector('#reveal-dialog').open")
        try page.type("#reveal-passcode", passcode)
        try page.press("Enter")
        try page.wait("document.querySelector('#secret').textContent === 'zebra-cobalt-7431'")

        // A change made elsewhere reaches the open page.
        try page.navigate(window.origin + "/")
        #expect(try security("add-generic-password", "-s", "made elsewhere", "-a", "bob", "-w", "zebra-cobalt-7431").status == 0)
        try page.wait("document.querySelector('#items').textContent.includes('made elsewhere')")
        #expect(try security("lock-keychain").status == 0)
        try page.wait("document.querySelector('#unlock-password')")
        try page.type("#unlock-password", passcode)
        try page.click("#unlock")
        try page.wait("document.querySelector('#lock')")

        // Keychain Health: the reused password (and how weak it is not), by the password.
        try page.click("a.button", text: "Keychain Health")
        try page.wait("document.querySelector('#health-passcode')")
        try page.type("#health-passcode", "0000")
        try page.click("#check-health")
        try page.wait("document.querySelector('#failure')")
        #expect(try failedUnlocks() == "failed unlocks: 1", "a wrong password counts once, not once per item")
        try page.type("#health-passcode", passcode)
        try page.click("#check-health")
        try page.wait("document.querySelector('#health-title') && document.body.textContent.includes('Checked')")
        let report = try page.text("main")
        #expect(report.contains("Reused passwords") && report.contains("made elsewhere") && report.contains("github.com"), "\(report)")
        #expect(!report.contains("zebra"))

        // An open page does not keep the keychain awake: it locks after its timeout.
        #expect(try security("set-keychain-settings", "-t", "2").status == 0)
        try page.navigate(window.origin + "/")
        try page.wait("document.querySelector('#unlock-password')", timeout: 20)

        let profile = browser!.profile
        try page.close()
        browser = nil  // stopped by pid
        let leftovers = try CommandRunner.run(executable: "/usr/bin/grep", ["-r", "-l", "-a", "zebra-cobalt-7431", profile], clearing: true)
        #expect(leftovers.stdout.isEmpty, "the secret is in the browser's files: \(leftovers.stdout)")
        for _ in 0..<200 where window.process.isRunning { usleep(50_000) }
        #expect(!window.process.isRunning, "keychain-access exits once its last page has been closed for --linger")
        #expect(!FileManager.default.fileExists(atPath: window.redirectFile))
    }
}
