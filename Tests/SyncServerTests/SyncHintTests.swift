import Foundation
import KeychainTestSupport
import Testing

/// Devices whose securityd syncs by itself: a change is sent soon after it is made and the
/// other device pulls on the server's hint. Their timers are an hour long, so only a change
/// or a hint explains a round within the test.
@Suite final class SyncHintTests {
    let devices: SyncDeviceHomes

    init() throws {
        devices = try SyncDeviceHomes(["a", "b"], automatic: true)
    }

    /// Waits up to `seconds` for `device`'s synchronizable password to read `expected` (nil:
    /// to be gone); whether it did.
    func eventually(_ device: Int, _ account: String, reads expected: String?, within seconds: Double = 30) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try devices.password(device, account, service: "mail.example") == expected { return true }
            usleep(100_000)
        }
        return false
    }

    @Test func aChangeReachesTheOtherDeviceWithoutARoundAskedFor() throws {
        var server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try devices.security(0, ["sync", "enable", "--server", url]).status == 0)
        try devices.pair(0, 1, server: url)

        #expect(try devices.security(0, ["add-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "from A"]).status == 0)
        #expect(try eventually(1, "alice", reads: "from A"), "B never saw A's new item: \(devices.log(1))")
        #expect(try devices.security(1, ["add-generic-password", "-U", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "changed on B"]).status == 0)
        #expect(try eventually(0, "alice", reads: "changed on B"), "A never saw B's change: \(devices.log(0))")
        #expect(try devices.security(0, ["delete-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example"]).status == 0)
        #expect(try eventually(1, "alice", reads: nil), "B never saw A's deletion")

        // The server restarts (on the same port): the sockets come back by themselves, and a
        // change made while it was down goes out once it is up.
        let port = server.port
        server.stop()
        #expect(try devices.security(0, ["add-generic-password", "--synchronizable", "-a", "carol", "-s", "mail.example", "-w", "while down"]).status == 0)
        server = try devices.server(port: port)
        #expect(try devices.security(1, ["add-generic-password", "--synchronizable", "-a", "dave", "-s", "mail.example", "-w", "after restart"]).status == 0)
        #expect(try eventually(0, "dave", reads: "after restart", within: 90), "A's socket did not come back: \(devices.log(0))")
        #expect(try eventually(1, "carol", reads: "while down", within: 90), "A's change made while the server was down never arrived")

        // Off: the daemon closes its socket; a change elsewhere no longer arrives by itself.
        #expect(try devices.security(1, ["sync", "disable"]).status == 0)
        #expect(try devices.security(0, ["add-generic-password", "--synchronizable", "-a", "erin", "-s", "mail.example", "-w", "not for B"]).status == 0)
        #expect(try eventually(1, "erin", reads: "not for B", within: 3) == false)
        withExtendedLifetime(server) {}
    }
}
