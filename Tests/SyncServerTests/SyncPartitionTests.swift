import Foundation
import KeychainTestSupport
import Testing

/// Two devices whose second reaches trousseau-syncd through a ``FaultyProxy``: cut off
/// while both edit, healed slowly; or its write reaching the server with the answer lost.
@Suite final class SyncPartitionTests {
    let devices: SyncDeviceHomes

    init() throws {
        devices = try SyncDeviceHomes(["a", "b"])
    }

    func security(_ device: Int, _ arguments: String...) throws -> CommandResult {
        try devices.security(device, arguments)
    }

    func password(_ device: Int, _ account: String) throws -> String? {
        try devices.password(device, account, service: "cut.example")
    }

    /// The status line of `device` that starts with `name: `.
    func status(_ device: Int, _ name: String) throws -> String? {
        try security(device, "sync", "status").stdout.split(separator: "\n").first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
    }

    /// A and B in one circle, B through the proxy; `accounts` made on A and synced to both.
    func circle(through proxy: FaultyProxy, server: SyncDaemonProcess, accounts: [String]) throws {
        #expect(try security(0, "sync", "enable", "--server", "http://127.0.0.1:\(server.port)").status == 0)
        try devices.pair(0, 1, server: "http://127.0.0.1:\(proxy.port)")
        for account in accounts {
            #expect(try security(0, "add-generic-password", "--synchronizable", "-a", account, "-s", "cut.example", "-l", "first label", "-w", "first").status == 0)
        }
        try devices.roundsUntilQuiet()
        for account in accounts { #expect(try password(1, account) == "first") }
    }

    @Test func editsOnBothSidesOfAPartitionMergePerFieldWhenItHeals() throws {
        let server = try devices.server()
        let proxy = try FaultyProxy(to: server.port)
        try circle(through: proxy, server: server, accounts: ["fields", "password"])

        proxy.mode = .partitioned
        // Different fields of one item: each side's change is kept.
        // (-l repeated: without it the tool sets the label to the service, as macOS's does.)
        #expect(try security(0, "add-generic-password", "-U", "--synchronizable", "-a", "fields", "-s", "cut.example", "-l", "first label", "-w", "password from a").status == 0)
        #expect(try security(1, "add-generic-password", "-U", "--synchronizable", "-a", "fields", "-s", "cut.example", "-l", "label from b", "-w", "first").status == 0)
        // One field on both: the later edit wins; the earlier is kept in the history.
        #expect(try security(0, "add-generic-password", "-U", "--synchronizable", "-a", "password", "-s", "cut.example", "-w", "earlier, on a").status == 0)
        #expect(try security(1, "add-generic-password", "-U", "--synchronizable", "-a", "password", "-s", "cut.example", "-w", "later, on b").status == 0)
        #expect(try security(1, "add-generic-password", "--synchronizable", "-a", "offline", "-s", "cut.example", "-w", "made while cut off").status == 0)
        #expect(try security(0, "sync", "now").status == 0)
        let cut = try security(1, "sync", "now")
        #expect(cut.status != 0 && cut.stderr.contains("cannot be reached"), "\(cut.stderr)")
        #expect(try status(1, "pending") == "3", "B's changes wait for the network")

        // Healed, slowly: every chunk through the proxy waits 50 ms.
        proxy.mode = .delay(milliseconds: 50)
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try password(device, "fields") == "password from a", "device \(device)")
            let attributes = try security(device, "find-generic-password", "--synchronizable", "-a", "fields", "-s", "cut.example").stdout
            #expect(attributes.contains("0x00000007 <blob>=\"label from b\""), "device \(device): \(attributes)")  // a genp's label, as macOS prints it
            #expect(try password(device, "password") == "later, on b", "device \(device)")
            #expect(try password(device, "offline") == "made while cut off", "device \(device)")
            #expect(try status(device, "pending") == "0")
        }
        // B merged A's edits into its own: the one value that lost is in B's history, with
        // its secret only when asked.
        let fieldsHistory = try security(1, "sync", "history", "-a", "fields", "-s", "cut.example", "-w").stdout
        #expect(try status(1, "history") == "1", "only the password both changed lost: \(fieldsHistory)")
        let lost = try security(1, "sync", "history", "-a", "password", "-s", "cut.example", "-w")
        #expect(lost.status == 0 && lost.stdout.hasSuffix("    password: earlier, on a\n"), "\(lost.stdout) \(lost.stderr)")
    }

    @Test func aWriteWhoseAnswerIsLostIsNeitherLostNorDoubled() throws {
        let server = try devices.server()
        let proxy = try FaultyProxy(to: server.port)
        try circle(through: proxy, server: server, accounts: ["kept"])

        // B's batch reaches the server, which applies it; B never hears so.
        #expect(try security(1, "add-generic-password", "-U", "--synchronizable", "-a", "kept", "-s", "cut.example", "-w", "changed on b").status == 0)
        #expect(try security(1, "add-generic-password", "--synchronizable", "-a", "new", "-s", "cut.example", "-w", "made on b").status == 0)
        proxy.mode = .swallowAnswers(to: "/batch")
        let unanswered = try security(1, "sync", "now")
        #expect(unanswered.status != 0, "\(unanswered.stdout)")
        #expect(try status(1, "pending") == "2", "unacknowledged, so still queued")
        // A already has both from the server.
        #expect(try security(0, "sync", "now").status == 0)
        #expect(try password(0, "kept") == "changed on b" && (try password(0, "new")) == "made on b")

        // B resends what the server already has: the conflict is with its own write, so
        // nothing is merged, lost or made twice.
        proxy.mode = .pass
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            #expect(try password(device, "kept") == "changed on b" && (try password(device, "new")) == "made on b", "device \(device)")
            #expect(try status(device, "pending") == "0" && (try status(device, "history")) == "0", "device \(device)")
            #expect(try status(device, "synced") == "2", "device \(device): two items, each once")
        }
    }
}
