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

    /// securityd, which holds the keys, opens no network socket: its child the sync agent
    /// holds the server's connections, starts only once sync is on, and, killed, is replaced
    /// by itself and listens again — a change on the other device still arrives by its hint.
    @Test func onlyTheSyncAgentSpeaksToTheNetwork() throws {
        let server = try devices.server()
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try devices.security(1, ["sync", "status"]).status == 0)
        let offDaemon = try #require(DaemonControl.pid(home: devices.homes[1]))
        #expect(Self.agents(of: offDaemon).isEmpty, "an agent runs while sync is off")

        #expect(try devices.security(0, ["sync", "enable", "--server", url]).status == 0)
        try devices.pair(0, 1, server: url)
        #expect(try devices.security(0, ["add-generic-password", "--synchronizable", "-a", "alice", "-s", "mail.example", "-w", "from A"]).status == 0)
        #expect(try eventually(1, "alice", reads: "from A"), "B never saw A's new item: \(devices.log(1))")

        let daemon = try #require(DaemonControl.pid(home: devices.homes[0]))
        let agents = Self.agents(of: daemon)
        try #require(agents.count == 1, "securityd's agents: \(agents)")
        // The hint socket is the agent's (it may be reconnecting: a while to find it). Both
        // are non-dumpable: only root reads their descriptors (ProcessBoundaryTests checks
        // securityd's binary for everyone).
        if access("/proc/\(agents[0])/fd", R_OK) == 0 {
            var agentSockets = Self.tcpSockets(of: agents[0])
            for _ in 0..<100 where agentSockets.isEmpty {
                usleep(100_000)
                agentSockets = Self.tcpSockets(of: agents[0])
            }
            #expect(!agentSockets.isEmpty, "the agent holds no TCP socket: \(devices.log(0))")
            #expect(Self.tcpSockets(of: daemon).isEmpty, "securityd holds a TCP socket")
        }

        kill(agents[0], SIGKILL)
        let deadline = Date().addingTimeInterval(20)
        var replaced: [pid_t] = []
        while Date() < deadline, replaced.isEmpty {
            usleep(100_000)
            replaced = Self.agents(of: daemon).filter { $0 != agents[0] }
        }
        #expect(replaced.count == 1, "no agent replaced the killed one: \(devices.log(0))")
        #expect(try devices.security(1, ["add-generic-password", "--synchronizable", "-a", "bob", "-s", "mail.example", "-w", "from B"]).status == 0)
        #expect(try eventually(0, "bob", reads: "from B"), "A heard no hint after its agent was replaced: \(devices.log(0))")
        withExtendedLifetime(server) {}
    }

    /// The running sync agents whose parent is `daemon`.
    static func agents(of daemon: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard DaemonControl.isRunning(pid), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"), let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            let program = cmdline.split(separator: 0).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return fields.count > 2 && pid_t(fields[1]) == daemon && program.hasSuffix("/trousseau-sync-agent")
        }
    }

    /// The inodes of the TCP sockets (IPv4 and IPv6) among `pid`'s descriptors.
    static func tcpSockets(of pid: pid_t) -> Set<String> {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let sockets = Set(descriptors.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"), target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst("socket:[".count).dropLast())
        })
        var tcp: Set<String> = []
        for table in ["tcp", "tcp6"] {
            // Read to the end: procfs says its size is 0, and a busy machine's table is many pages.
            let file = FileHandle(forReadingAtPath: "/proc/\(pid)/net/\(table)")
            let text = String(decoding: file?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            try? file?.close()
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                if fields.count > 9 { tcp.insert(String(fields[9])) }
            }
        }
        return sockets.intersection(tcp)
    }
}
