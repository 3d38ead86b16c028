import Foundation
import KeychainTestSupport
import Testing

/// Three device homes — each its own securityd and enclave, driven by `security` — syncing
/// through one real trousseau-syncd, on SQLite and on PostgreSQL: two paired with a code, the
/// third joined through the second; items added, changed and deleted on each, through
/// `security` and through an app's SecItem calls, converge on all.
@Suite final class SyncThreeDeviceTests {
    let devices: SyncDeviceHomes

    init() throws {
        devices = try SyncDeviceHomes(["a", "b", "c"])
    }

    func security(_ device: Int, _ arguments: String...) throws -> CommandResult {
        try devices.security(device, arguments)
    }

    func password(_ device: Int, _ account: String) throws -> String? {
        try devices.password(device, account, service: "mail.example")
    }

    @Test(arguments: Backend.available)
    func threeDevicesConvergeAndKeepTheLosingValue(_ backend: Backend) throws {
        let location = try backend == .sqlite ? devices.directory + "/server.sqlite" : backend.makeLocation()
        let server = try SyncDaemonProcess(
            (backend == .sqlite ? ["--database", location] : ["--postgres", location]) + ["--open-registration"], log: devices.directory + "/syncd.log")
        let url = "http://127.0.0.1:\(server.port)"

        #expect(try security(0, "add-generic-password", "--synchronizable", "-a", "shared", "-s", "mail.example", "-w", "first").status == 0)
        #expect(try security(0, "sync", "enable", "--server", url).status == 0)
        try devices.pair(0, 1, server: url)
        try devices.pair(1, 2, server: url)  // the third joins through the second
        for device in devices.indices {
            #expect(try security(device, "add-generic-password", "--synchronizable", "-a", "from-\(device)", "-s", "mail.example", "-w", "written on \(device)").status == 0)
            #expect(try security(device, "add-generic-password", "-a", "local-\(device)", "-s", "mail.example", "-w", "stays on \(device)").status == 0)
        }
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            // The first learnt of the third from the chain on the server, in a round.
            #expect(try security(device, "sync", "devices").stdout.split(separator: "\n").count == 3, "device \(device)")
            for writer in devices.indices {
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
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try password(device, "shared") == "edited on c", "device \(device)")
            #expect(try password(device, "from-0") == nil, "device \(device): the deletion reached it")
        }
        let history = try security(2, "sync", "status").stdout
        #expect(history.contains("history: 1\n"), "the merge on c kept a's value: \(history)")
        let lost = try security(2, "sync", "history", "-a", "shared", "-s", "mail.example", "-w")
        #expect(lost.status == 0, "\(lost.stderr)")
        #expect(lost.stdout.hasPrefix("\"shared\" at \"mail.example\": 1 value(s) lost a merge\nversion "), "\(lost.stdout)")
        #expect(lost.stdout.contains(" by device ") && lost.stdout.hasSuffix("    password: edited on a\n"), "only what lost, the password: \(lost.stdout)")
        #expect(!(try security(2, "sync", "history", "-a", "shared", "-s", "mail.example").stdout.contains("password")), "no secret without -w")

        // An app's SecItem calls (one executable on every machine, so one access group): added
        // on c, updated on a, deleted on b; each device's ThisDeviceOnly item stays on it.
        func app(_ device: Int, _ arguments: String...) throws -> String {
            try devices.app(device, arguments).stdout
        }
        #expect(try app(2, "--synchronizable", "add", "app.example", "carol", "added by the app on c") == "status=0\n")
        for device in devices.indices {
            #expect(try app(device, "--synchronizable", "--this-device-only", "add", "app.example", "pinned-\(device)", "pinned to \(device)") == "status=0\n")
        }
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try app(device, "--synchronizable", "find", "app.example", "carol").hasSuffix("data=added by the app on c\n"), "device \(device)")
        }
        #expect(try app(0, "--synchronizable", "update", "app.example", "carol", "updated by the app on a") == "status=0\n")
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try app(device, "--synchronizable", "find", "app.example", "carol").hasSuffix("data=updated by the app on a\n"), "device \(device)")
        }
        #expect(try app(1, "--synchronizable", "delete", "app.example", "carol") == "status=0\n")
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try app(device, "--synchronizable", "find", "app.example", "carol").hasPrefix("status=-25300\n"), "device \(device): the app's deletion reached it")
            for other in devices.indices {
                let pinned = try app(device, "--synchronizable", "find", "app.example", "pinned-\(other)")
                #expect(other == device ? pinned.hasSuffix("data=pinned to \(other)\n") : pinned.hasPrefix("status=-25300\n"), "device \(device), pinned-\(other)")
            }
        }

        // The server holds ciphertext only.
        if backend == .sqlite {
            server.stop()
            let bytes = [location, location + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }.reduce(Data(), +)
            for plaintext in ["shared", "mail.example", "first", "edited on", "written on", "from-", "local-", "stays on", "app.example", "carol", "by the app", "pinned"] {
                #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "the server's database holds \(plaintext)")
            }
        }
    }
}
