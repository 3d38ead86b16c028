import Foundation
import KeychainTestSupport
import Testing

/// Three device homes — each its own securityd and enclave, driven by `security` — syncing
/// through one real trousseau-syncd, on SQLite and on PostgreSQL: two paired with a code, the
/// third joined through the second; items added, changed and deleted on each converge on all.
@Suite final class SyncThreeDeviceTests {
    let directory: String
    let homes: [String]

    init() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        self.directory = directory
        homes = ["a", "b", "c"].map { directory + "/device-" + $0 }
    }

    deinit {
        for home in homes { DaemonControl.stop(home: home) }
        try? FileManagerLite.removeTree(directory)
    }

    func security(_ device: Int, _ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": homes[device], "TROUSSEAU_SECURITYD_LOG": homes[device] + ".log"], input: input)
    }

    /// `member` shows a code and approves; `newcomer` joins with it.
    func pair(_ member: Int, _ newcomer: Int, server url: String) throws {
        let pairing = try RunningCommand(
            "security", ["sync", "pair", "--approve"], environment: ["KEYCHAIN_HOME": homes[member], "TROUSSEAU_SECURITYD_LOG": homes[member] + ".log"])
        let code = String(pairing.readLine().dropFirst("code: ".count))
        let joined = try security(newcomer, "sync", "join", "--server", url, "-", input: code + "\n")
        let paired = pairing.finish()
        #expect(joined.status == 0 && paired.status == 0, "\(joined.stderr) \(paired.stderr)")
    }

    /// Rounds on every device until nothing moves (at most three passes).
    func converge() throws {
        for _ in 0..<3 {
            var moved = false
            for device in homes.indices {
                let round = try security(device, "sync", "now")
                #expect(round.status == 0, "\(round.stderr)")
                moved = moved || !round.stdout.hasPrefix("received 0, sent 0,")
            }
            if !moved { return }
        }
    }

    func password(_ device: Int, _ account: String) throws -> String? {
        let found = try security(device, "find-generic-password", "--synchronizable", "-a", account, "-s", "mail.example", "-w")
        return found.status == 0 ? String(found.stdout.dropLast()) : nil
    }

    @Test(arguments: Backend.available)
    func threeDevicesConvergeAndKeepTheLosingValue(_ backend: Backend) throws {
        let location = try backend == .sqlite ? directory + "/server.sqlite" : backend.makeLocation()
        let server = try SyncDaemonProcess(
            (backend == .sqlite ? ["--database", location] : ["--postgres", location]) + ["--open-registration"], log: directory + "/syncd.log")
        let url = "http://127.0.0.1:\(server.port)"

        #expect(try security(0, "add-generic-password", "--synchronizable", "-a", "shared", "-s", "mail.example", "-w", "first").status == 0)
        #expect(try security(0, "sync", "enable", "--server", url).status == 0)
        try pair(0, 1, server: url)
        try pair(1, 2, server: url)  // the third joins through the second
        for device in homes.indices {
            #expect(try security(device, "add-generic-password", "--synchronizable", "-a", "from-\(device)", "-s", "mail.example", "-w", "written on \(device)").status == 0)
            #expect(try security(device, "add-generic-password", "-a", "local-\(device)", "-s", "mail.example", "-w", "stays on \(device)").status == 0)
        }
        try converge()
        for device in homes.indices {
            // The first learnt of the third from the chain on the server, in a round.
            #expect(try security(device, "sync", "devices").stdout.split(separator: "\n").count == 3, "device \(device)")
            for writer in homes.indices {
                #expect(try password(device, "from-\(writer)") == "written on \(writer)", "device \(device) has what \(writer) wrote")
                if writer != device {
                    #expect(try security(device, "find-generic-password", "-a", "local-\(writer)", "-w").status != 0, "a local item stays on its device")
                }
            }
        }

        // Concurrent edits of one item on two devices before either syncs: the later edit
        // wins everywhere, and the device that merged keeps the other value in its history.
        #expect(try security(0, "add-generic-password", "-U", "--synchronizable", "-a", "shared", "-s", "mail.example", "-w", "edited on a").status == 0)
        #expect(try security(2, "add-generic-password", "-U", "--synchronizable", "-a", "shared", "-s", "mail.example", "-w", "edited on c").status == 0)
        // …and a deletion on the second device.
        #expect(try security(1, "delete-generic-password", "--synchronizable", "-a", "from-0", "-s", "mail.example").status == 0)
        try converge()
        for device in homes.indices {
            #expect(try password(device, "shared") == "edited on c", "device \(device)")
            #expect(try password(device, "from-0") == nil, "device \(device): the deletion reached it")
        }
        let history = try security(2, "sync", "status").stdout
        #expect(history.contains("history: 1\n"), "the merge on c kept a's value: \(history)")

        // The server holds ciphertext only.
        if backend == .sqlite {
            server.stop()
            let bytes = [location, location + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }.reduce(Data(), +)
            for plaintext in ["shared", "mail.example", "first", "edited on", "written on", "from-", "local-", "stays on"] {
                #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "the server's database holds \(plaintext)")
            }
        }
    }
}
