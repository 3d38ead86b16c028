import Foundation
import KeychainTestSupport
import Testing

/// A device syncing through a real trousseau-syncd: its own home, securityd and enclave,
/// driven by the `security` tool as a user would.
@Suite final class SyncDeviceTests {
    let devices: SyncDeviceHomes
    var directory: String { devices.directory }
    var home: String { devices.homes[0] }

    init() throws {
        devices = try SyncDeviceHomes(["a", "b"])
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try devices.security(0, arguments)
    }

    func securityB(_ arguments: String...) throws -> CommandResult {
        try devices.security(1, arguments)
    }

    /// The server's files (the database and its write-ahead log) as one blob of bytes.
    func serverBytes(_ database: String) -> Data {
        [database, database + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }.reduce(Data(), +)
    }

    @Test func aDeviceFoundsACircleAndSendsOnlyCiphertext() throws {
        let database = directory + "/server.sqlite"
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try security("sync", "status").stdout == "sync: off\n")

        #expect(try security("add-generic-password", "-a", "local-account", "-s", "local.example", "-w", "stays-on-this-device").status == 0)
        #expect(try security("add-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example", "-l", "Alice's mail", "-w", "correct horse").status == 0)

        let enabled = try security("sync", "enable", "--server", url)
        #expect(enabled.status == 0, "\(enabled.stderr) \(server.logText)")
        let lines = Set(enabled.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains("sync: on") && lines.contains("server: \(url)") && lines.contains("devices: 1"))
        #expect(lines.contains("pending: 0") && lines.contains("synced: 1"), "the first round sent the one synchronizable item: \(enabled.stdout)")
        #expect(lines.contains { $0.hasPrefix("last sync: ") && $0.hasSuffix(" ok") })

        // A change and a deletion each go out in the next round.
        #expect(try security("add-generic-password", "-U", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "battery staple").status == 0)
        #expect(try security("sync", "status").stdout.contains("pending: 1\n"))
        #expect(try security("sync", "now").stdout == "received 0, sent 1, merged 0 conflict(s), refused 0, waiting for unlock 0\n")
        #expect(try security("add-generic-password", "--synchronizable", "-a", "bob", "-s", "mail.example", "-w", "tr0ub4dor").status == 0)
        #expect(try security("delete-generic-password", "--synchronizable", "-a", "bob", "-s", "mail.example").status == 0)
        let round = try security("sync", "now")
        #expect(round.status == 0, "\(round.stderr)")
        #expect(try security("sync", "status").stdout.contains("pending: 0\n"))

        // The server holds ciphertext only: no account, service, label or secret of any item.
        server.stop()
        let bytes = serverBytes(database)
        #expect(bytes.count > 0)
        for plaintext in ["alice", "bob", "mail.example", "Alice's mail", "correct horse", "battery staple", "tr0ub4dor", "local-account", "local.example", "stays-on-this-device"] {
            #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "the server's database holds \(plaintext)")
        }

        // The server gone: a round fails with the reason, and status says so.
        let unreachable = try security("sync", "now")
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("cannot be reached"), "\(unreachable.stderr)")
        #expect(try security("sync", "status").stdout.contains("failed: the sync server 127.0.0.1 cannot be reached"))

        // Off again: every item stays, the synchronizable one still found as one.
        #expect(try security("sync", "disable").status == 0)
        #expect(try security("sync", "status").stdout == "sync: off\n")
        #expect(try security("find-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w").stdout == "battery staple\n")
        #expect(try security("find-generic-password", "-a", "local-account", "-w").stdout == "stays-on-this-device\n")
    }

    @Test func enablingRefusesWhatIsNotASyncServer() throws {
        for (server, words) in [
            ("http://sync.example.org", "plain http:// only on this machine's loopback"),
            ("http://127.0.0.1.example.org", "plain http:// only on this machine's loopback"),
            ("https://user:secret@sync.example.org", "must not carry a user name or password"),
            ("sync.example.org", "a URL such as"),
            ("https://sync.example.org/?token=1", "takes no query"),
        ] {
            let refused = try security("sync", "enable", "--server", server)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains(words), "\(server): \(refused.stderr)")
            #expect(!refused.stderr.contains("secret"), "the refusal repeats no credential")
        }
        #expect(try security("sync", "status").stdout == "sync: off\n")
        let server = try devices.server()
        #expect(try security("sync", "enable", "--server", "http://127.0.0.1:\(server.port)").status == 0)
        let again = try security("sync", "enable", "--server", "http://127.0.0.1:\(server.port)")
        #expect(again.status != 0)
        #expect(again.stderr.contains("sync is already on"), "\(again.stderr)")
    }

    @Test func aRedirectIsNotFollowedSoTheCredentialGoesNowhereElse() throws {
        let elsewhere = try CannedHTTPServer(answer: "HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let redirecting = try CannedHTTPServer(
            answer: "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(elsewhere.port)/v1/accounts\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let enabled = try security("sync", "enable", "--server", "http://127.0.0.1:\(redirecting.port)")
        #expect(enabled.status != 0)
        #expect(enabled.stderr.contains("the sync server refused POST /v1/accounts: HTTP 307"), "\(enabled.stderr)")
        #expect(redirecting.requests == 1 && elsewhere.requests == 0, "the request, and its credential, went no further")
        #expect(try security("sync", "status").stdout == "sync: off\n")
    }

    @Test func aSecondDeviceJoinsWithTheCodeAndBothConverge() throws {
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try security("add-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "from A").status == 0)
        #expect(try security("add-generic-password", "-a", "local", "-s", "mail.example", "-w", "A only").status == 0)
        #expect(try security("sync", "enable", "--server", url).status == 0)
        #expect(try securityB("add-generic-password", "--synchronizable", "-a", "bob", "-s", "mail.example", "-w", "from B").status == 0)

        // A shows a code; B types it; A approves (--approve, as a script would).
        let (joined, paired) = try devices.pair(0, 1, server: url)
        #expect(paired.stdout.hasPrefix("device ") && paired.stdout.hasSuffix(" joined\n"))
        #expect(joined.stdout.contains("devices: 2\n"), "\(joined.stdout)")

        // B received A's item in its first round and sent its own; A receives B's.
        #expect(try securityB("find-generic-password", "--synchronizable", "-a", "alice", "-w").stdout == "from A\n")
        #expect(try security("sync", "now").status == 0)
        #expect(try security("find-generic-password", "--synchronizable", "-a", "bob", "-w").stdout == "from B\n")
        #expect(try securityB("find-generic-password", "-a", "local", "-w").status != 0, "a local item stays on its device")
        #expect(try security("sync", "devices").stdout.split(separator: "\n").count == 2)

        // A change on B and a deletion on A meet on both.
        #expect(try securityB("add-generic-password", "-U", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "changed on B").status == 0)
        #expect(try security("delete-generic-password", "--synchronizable", "-a", "bob", "-s", "mail.example").status == 0)
        for _ in 0..<2 {
            #expect(try securityB("sync", "now").status == 0)
            #expect(try security("sync", "now").status == 0)
        }
        #expect(try security("find-generic-password", "--synchronizable", "-a", "alice", "-w").stdout == "changed on B\n")
        #expect(try securityB("find-generic-password", "--synchronizable", "-a", "bob", "-w").status != 0, "the deletion reached B")
    }

    @Test func anAppsSecItemChangesSyncAndThisDeviceOnlyStays() throws {
        let database = directory + "/server.sqlite"
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try security("sync", "enable", "--server", url).status == 0)
        try devices.pair(0, 1, server: url)
        func app(_ device: Int, _ arguments: String...) throws -> String {
            try devices.app(device, arguments).stdout
        }
        // The same app on both machines (one executable, so one implicit access group).
        #expect(try app(0, "--synchronizable", "add", "app.example", "alice", "from the app") == "status=0\n")
        #expect(try app(0, "--synchronizable", "--this-device-only", "add", "app.example", "pinned", "never leaves a") == "status=0\n")
        #expect(try app(0, "add", "app.example", "plain", "not synchronizable") == "status=0\n")
        try devices.roundsUntilQuiet()
        #expect(try app(1, "--synchronizable", "find", "app.example", "alice").hasSuffix("data=from the app\n"))
        #expect(try app(1, "--synchronizable", "find", "app.example", "pinned").hasPrefix("status=-25300\n"), "ThisDeviceOnly stays on a")
        #expect(try app(1, "find", "app.example", "plain").hasPrefix("status=-25300\n"), "a local item stays on a")
        #expect(try security("sync", "status").stdout.contains("synced: 1\n"), "one record sent: the synchronizable item that may leave")

        // SecItemUpdate on b, SecItemDelete on a.
        #expect(try app(1, "--synchronizable", "update", "app.example", "alice", "updated on b") == "status=0\n")
        try devices.roundsUntilQuiet()
        #expect(try app(0, "--synchronizable", "find", "app.example", "alice").hasSuffix("data=updated on b\n"))
        #expect(try app(0, "--synchronizable", "delete", "app.example", "alice") == "status=0\n")
        try devices.roundsUntilQuiet()
        #expect(try app(1, "--synchronizable", "find", "app.example", "alice").hasPrefix("status=-25300\n"), "the deletion reached b")
        #expect(try app(0, "--synchronizable", "find", "app.example", "pinned").hasSuffix("data=never leaves a\n"))

        server.stop()
        let bytes = serverBytes(database)
        for plaintext in ["app.example", "alice", "pinned", "plain", "from the app", "updated on b", "never leaves", "not synchronizable"] {
            #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "the server's database holds \(plaintext)")
        }
    }

    @Test func aWrongCodeFailsOnBothSidesAndKillsThePairing() throws {
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try security("sync", "enable", "--server", url).status == 0)
        let pairing = try RunningCommand("security", ["sync", "pair", "--approve"], environment: devices.environment(0))
        let code = String(pairing.readLine().dropFirst("code: ".count))
        let nameplate = code.prefix { $0 != "-" }
        let wrong = try securityB("sync", "join", "--server", url, "\(nameplate)-0000-0000")
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("code"), "\(wrong.stderr)")
        let paired = pairing.finish()
        #expect(paired.status != 0, "the member's side fails too: \(paired.stdout)")
        // The code is dead: the right one no longer opens the pairing.
        let late = try securityB("sync", "join", "--server", url, code)
        #expect(late.status != 0)
        #expect(try securityB("sync", "status").stdout == "sync: off\n")
        #expect(try security("sync", "devices").stdout.split(separator: "\n").count == 1)
    }
}
