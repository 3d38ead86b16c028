import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The window's page against servers it did not come from: a page of another port of
/// 127.0.0.1 (the same site, so it gets the SameSite=Strict cookie) reading through GETs,
/// and a server of another user that takes the port once keychain-access has stopped.
extension KeychainAccessAttackTests {
    /// A server on 127.0.0.1:`port` run by Python (as uid 65534 when the test is root, through
    /// `setpriv`): it logs each request line to a file and answers WebSocket upgrades with a
    /// message that says the keychain changed; stopped by pid when dropped.
    final class PortTaker {
        let process = Process()
        let log: String

        init(port: Int, directory: String, page: String = "<!doctype html><p>impostor</p>") throws {
            // A directory the other uid can read and write: the script, its log.
            let shared = directory + "/port-taker-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            chmod(directory, 0o711)
            chmod(shared, 0o777)
            log = shared + "/requests.log"
            try Self.script.write(toFile: shared + "/serve.py", atomically: true, encoding: .utf8)
            try page.write(toFile: shared + "/page.html", atomically: true, encoding: .utf8)
            chmod(shared + "/serve.py", 0o644)
            chmod(shared + "/page.html", 0o644)
            let python = ["/usr/bin/python3", shared + "/serve.py", String(port), log, shared + "/page.html"]
            if getuid() == 0 {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups"] + python
            } else {
                process.executableURL = URL(fileURLWithPath: python[0])
                process.arguments = Array(python.dropFirst())
            }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<200 where !requests.contains("listening") { usleep(50_000) }
            guard requests.contains("listening") else { throw Chromium.Failure("the port taker did not bind \(port)") }
        }

        deinit {
            kill(process.processIdentifier, SIGKILL)  // it inherits the test's blocked SIGTERM
            process.waitUntilExit()
        }

        /// The request lines it received, one a line, after "listening".
        var requests: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        static let script = #"""
            import base64, hashlib, socketserver, sys, time
            port, log, page = int(sys.argv[1]), open(sys.argv[2], "a", buffering=1), open(sys.argv[3], "rb").read()
            class Handler(socketserver.StreamRequestHandler):
                def handle(self):
                    line = self.rfile.readline().decode("latin-1").strip()
                    headers = {}
                    while True:
                        header = self.rfile.readline().decode("latin-1").strip()
                        if not header:
                            break
                        name, _, value = header.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    log.write(line + "\n")
                    if "sec-websocket-key" in headers:
                        accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
                        self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
                        message = b'{"run":"guessed","generation":"taken"}'
                        self.wfile.write(bytes([0x81, len(message)]) + message)
                        self.wfile.flush()
                        time.sleep(10)
                    else:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(page) + page)
            class Server(socketserver.ThreadingTCPServer):
                allow_reuse_address = True
                daemon_threads = True
            for _ in range(200):
                try:
                    server = Server(("127.0.0.1", port), Handler)
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                sys.exit("cannot bind")
            log.write("listening\n")
            server.serve_forever()
            """#
    }

    @Test func aServerThatTakesThePortAfterTheWindowStopsIsNeverAskedForAPage() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory)
        let browser = try Chromium(directory: keychain.directory)
        let page = try browser.newPage()
        try page.navigate(try #require(window.launchURL))
        try page.wait("document.querySelector('#items tbody a')")

        kill(window.process.processIdentifier, SIGKILL)
        window.process.waitUntilExit()
        try page.wait("!document.querySelector('#offline').hidden")
        #expect(try page.text("#offline").contains("Keychain Access has stopped"))
        let taker = try PortTaker(port: window.port, directory: keychain.directory)
        // The page used to try the port again every 2 s and reload on a new generation: give it
        // three times that.
        usleep(6_000_000)
        let asked = taker.requests.filter { $0 != "listening" }
        #expect(asked.isEmpty, "the page reached the server that took its port: \(asked)")
        #expect(try page.evaluate("location.href") as? String == window.origin + "/")
        #expect(try page.text("#items").contains("github.com"), "the tab still shows what the window served")
        #expect(!(try page.text("body").contains("impostor")))
    }

    @Test func aPageOfAnotherPortCannotReadTheWindow() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory)
        let browser = try Chromium(directory: keychain.directory)
        let page = try browser.newPage()
        try page.navigate(try #require(window.launchURL))
        try page.wait("document.querySelector('#items tbody a')")

        // Another port of 127.0.0.1 — the same site, so the cookie goes along — with images of
        // the window's list and of a notice it would show.
        let port = 20000 + Int.random(in: 0..<20000)
        let images = "<img src=\"\(window.origin)/\"><img src=\"\(window.origin)/?notice=Enter%20your%20login%20password%20below\">"
        let attacker = try browser.newPage()
        try attacker.enableNetworkEvents()
        let taker = try PortTaker(port: port, directory: keychain.directory, page: "<!doctype html><p>attacker</p>" + images)
        try attacker.navigate("http://127.0.0.1:\(port)/")
        try attacker.wait("Array.from(document.images).every((image) => image.complete)")
        #expect(taker.requests.contains { $0.hasPrefix("GET / ") })
        var statuses: [Int] = []
        for _ in 0..<100 {
            statuses = try attacker.responseStatuses(startingWith: window.origin)
            if statuses.count == 2 { break }
            usleep(50_000)
        }
        #expect(statuses == [403, 403], "the images' responses: \(statuses)")
        // Sent there as a top-level navigation by its script: refused with the reason.
        try attacker.evaluate("location.href = '\(window.origin)/?notice=Enter%20your%20login%20password%20below'")
        try attacker.wait("location.href.startsWith('\(window.origin)')")
        #expect(try attacker.text("body").contains("did not come from the window's own page"))
        #expect(!(try attacker.text("body").contains("Enter your login password")))
        // What the browser says of each, as curl sends it: only the window's own page and the user pass.
        let cookies = try browser.send("Network.getCookies", session: page.session, ["urls": [window.origin]])["cookies"] as? [[String: Any]] ?? []
        let cookie = try #require(cookies.first { $0["name"] as? String == "keychain-access" }?["value"] as? String)
        for (site, status) in [("same-site", 403), ("cross-site", 403), ("same-origin", 200), ("none", 200)] {
            #expect(try window.http("GET", "/", cookie: cookie, headers: ["Sec-Fetch-Site: \(site)"]).status == status, "Sec-Fetch-Site: \(site)")
        }
        // The window's own page still works: its links, and the address bar.
        try page.click("#items tbody a", text: "github.com")
        try page.wait("document.querySelector('#item-title')?.textContent === 'github.com'")
        try page.navigate(window.origin + "/?notice=Hello")
        #expect(try page.text("body").contains("Hello"))
    }

    @Test func theLinkFileOpensTheWindow() throws {
        let window = try WindowProcess(home: keychain.home, directory: keychain.directory)
        let browser = try Chromium(directory: keychain.directory)
        let page = try browser.newPage()
        try page.navigate("file://" + window.redirectFile)
        try page.wait("document.querySelector('#items tbody a')", timeout: 20)
        #expect(try page.evaluate("location.href") as? String == window.origin + "/")
    }
}
