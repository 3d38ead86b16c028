import Foundation
import KeychainTestSupport
import Testing

/// The recovery key (issue 33 point 5) through a real trousseau-syncd: three devices in a
/// circle, a recovery key made on one, every device's home deleted; a new device given the key
/// joins and gets every synced item back. A circle without one says so.
@Suite final class SyncRecoveryTests {
    let devices: SyncDeviceHomes

    init() throws {
        devices = try SyncDeviceHomes(["a", "b", "c", "new", "stranger"])
    }

    func security(_ device: Int, _ arguments: String..., input: String = "") throws -> CommandResult {
        try devices.security(device, arguments, input: input)
    }

    func password(_ device: Int, _ account: String) throws -> String? {
        try devices.password(device, account, service: "recovery.example")
    }

    @Test func aNewDeviceWithTheRecoveryKeyGetsEverySyncedItemBackWhenEveryDeviceIsLost() throws {
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try security(0, "sync", "enable", "--server", url).status == 0)
        try devices.pair(0, 1, server: url)
        try devices.pair(1, 2, server: url)
        for device in 0..<3 {
            #expect(try security(device, "add-generic-password", "--synchronizable", "-a", "from-\(device)", "-s", "recovery.example", "-w", "written on \(device)").status == 0)
        }
        #expect(try security(0, "add-generic-password", "-a", "local", "-s", "recovery.example", "-w", "this device only").status == 0)
        try devices.roundsUntilQuiet(only: [0, 1, 2])
        #expect(try security(2, "sync", "status").stdout.contains("warning: this circle has no recovery key: if every device is lost, so are the synced items"))

        let made = try security(2, "sync", "recovery-key", "create")
        #expect(made.status == 0, "\(made.stderr)\n\(devices.log(2))")
        let line = try #require(made.stdout.split(separator: "\n").first { $0.hasPrefix("recovery key: ") })
        let key = String(line.dropFirst("recovery key: ".count))
        #expect(key.count == 39 && key.split(separator: "-").count == 8 && key.allSatisfy { $0 == "-" || "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) }, "\(key)")
        let again = try security(2, "sync", "recovery-key", "create")
        #expect(again.status != 0 && again.stderr.contains("this circle has a recovery key"), "one at a time: \(again.stderr)")
        try devices.roundsUntilQuiet(only: [0, 1, 2])
        for device in 0..<3 {
            let said = try security(device, "sync", "status").stdout
            #expect(said.contains("recovery key: recovery-") && !said.contains("no recovery key") && said.contains("devices: 3"), "device \(device): \(said)")
        }
        // A change after the key was made (and a rotation: removing C shares the new keys to
        // the recovery key's member as to any member).
        #expect(try security(0, "add-generic-password", "-U", "--synchronizable", "-a", "from-0", "-s", "recovery.example", "-w", "changed on 0").status == 0)
        let removal = try security(0, "sync", "remove-device", try devices.security(2, ["sync", "status"]).stdout.split(separator: "\n")
            .first { $0.hasPrefix("this device: ") }.map { String($0.dropFirst("this device: ".count)) } ?? "")
        #expect(removal.status == 0, "\(removal.stderr)")
        #expect(try security(0, "add-generic-password", "--synchronizable", "-a", "after-rotation", "-s", "recovery.example", "-w", "new keys").status == 0)
        try devices.roundsUntilQuiet(only: [0, 1])

        // Every device lost: daemons stopped, homes deleted.
        for device in 0..<3 { devices.forget(device) }

        // A wrong key is refused and leaves sync off.
        let wrong = try security(4, "sync", "recover", "--server", url, "-", input: "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH\n")
        #expect(wrong.status != 0 && wrong.stderr.contains("the server knows no circle with this recovery key"), "\(wrong.stderr)")
        let notKey = try security(4, "sync", "recover", "--server", url, "-", input: "correct horse battery staple\n")
        #expect(notKey.status != 0 && notKey.stderr.contains("not a recovery key"), "\(notKey.stderr)")
        #expect(try security(4, "sync", "status").stdout == "sync: off\n")

        // The key as typed by hand: lower case, spaces for dashes.
        let typed = key.lowercased().replacingOccurrences(of: "-", with: " ")
        let recovered = try security(3, "sync", "recover", "--server", url, "-", input: typed + "\n")
        #expect(recovered.status == 0, "\(recovered.stderr)\n\(devices.log(3))")
        _ = try security(3, "sync", "now")
        #expect(try password(3, "from-0") == "changed on 0")
        #expect(try password(3, "from-1") == "written on 1")
        #expect(try password(3, "from-2") == "written on 2")
        #expect(try password(3, "after-rotation") == "new keys")
        #expect(try security(3, "find-generic-password", "-a", "local", "-s", "recovery.example").status != 0, "a ThisDevice… local item never synced")
        let said = try security(3, "sync", "status").stdout
        #expect(said.contains("sync: on") && said.contains("recovery key: recovery-"), "\(said)")
        // It syncs as a member: a new item reaches the server and comes back to a device that
        // joins through it.
        #expect(try security(3, "add-generic-password", "--synchronizable", "-a", "recovered", "-s", "recovery.example", "-w", "after recovery").status == 0)
        #expect(try security(3, "sync", "now").status == 0)
        try devices.pair(3, 4, server: url)
        _ = try security(4, "sync", "now")
        #expect(try password(4, "recovered") == "after recovery" && password(4, "from-1") == "written on 1")
    }
}
