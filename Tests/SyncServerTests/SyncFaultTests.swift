import Foundation
import KeychainTestSupport
import Testing

/// Three device homes syncing through a real trousseau-syncd while things break: seeded
/// random edits, rounds in random order, securityd of a device killed with SIGKILL during a
/// round, the server killed with SIGKILL and restarted on its database. After healing every
/// device must hold the model's state: for each account, the last write wins (an edit after
/// a delete revives it, a delete after an edit removes it), and no write a command
/// acknowledged is lost. (The engine's own seeded suite, in process, runs 20 seeds of 200
/// operations: `KeychainSyncEngineTests`.)
enum SyncFaultTests {
    /// Twenty seeds (11–30) in two lanes of ten, each lane one seed after another: a seed is
    /// a sequence of commands, each waiting for the last, so one lane keeps about one core
    /// busy; one lane of twenty ran alone for the suite's last three minutes on CI's two cores.
    static let seeds = Array(UInt64(11)...30)

    /// Each test runs on a thread of its own: run on the concurrency pool (a synchronous
    /// test's place), their blocking waits held one of its two threads for minutes, and other
    /// suites' async tests starved (a TLS test's hint waited past its 60 s).
    @Suite(.serialized) final class OddSeeds {
        let devices: SyncDeviceHomes
        init() throws { devices = try SyncDeviceHomes(["a", "b", "c"]) }

        @Test(arguments: seeds.filter { $0 % 2 == 1 })
        func seededEditsWithKilledDaemonsAndServerConverge(_ seed: UInt64) async throws {
            let devices = devices
            try await onThread { try SyncFaultTests.run(seed: seed, devices) }
        }
    }

    @Suite(.serialized) final class EvenSeeds {
        let devices: SyncDeviceHomes
        init() throws { devices = try SyncDeviceHomes(["a", "b", "c"]) }

        @Test(arguments: seeds.filter { $0 % 2 == 0 })
        func seededEditsWithKilledDaemonsAndServerConverge(_ seed: UInt64) async throws {
            let devices = devices
            try await onThread { try SyncFaultTests.run(seed: seed, devices) }
        }
    }

    static func run(seed: UInt64, _ devices: SyncDeviceHomes) throws {
        func security(_ device: Int, _ arguments: [String]) throws -> CommandResult {
            try devices.security(device, arguments)
        }
        func password(_ device: Int, _ account: String) throws -> String? {
            try devices.password(device, account, service: "fault.example")
        }
        var random = SplitMix64(seed: seed)
        var server = try devices.server()
        let port = server.port
        let url = "http://127.0.0.1:\(port)"
        #expect(try security(0, ["sync", "enable", "--server", url]).status == 0)
        try devices.pair(0, 1, server: url)
        try devices.pair(0, 2, server: url)

        // Accounts are made by one device and synced to all before any other touches them
        // (two devices making one primary key at once is a collision, decided by uuid, not
        // by time: KeychainSyncEngineTests covers it).
        let accounts = (0..<10).map { "account-\($0)" }
        var model: [String: String?] = [:]
        for account in accounts {
            let value = "made-\(account)"
            #expect(try security(Int(random.next() % 3), ["add-generic-password", "--synchronizable", "-a", account, "-s", "fault.example", "-w", value]).status == 0)
            model[account] = .some(value)
        }
        try devices.roundsUntilQuiet()

        var kills = 0, serverKills = 0, edits = 0, deletes = 0
        for step in 0..<200 {
            let device = Int(random.next() % 3)
            let account = accounts[Int(random.next() % UInt64(accounts.count))]
            switch random.next() % 20 {
            case 0..<11:
                // An edit, where the item is here (an edit of an item this device has not got
                // would make a new one: a collision, not an edit).
                guard try password(device, account) != nil else { continue }
                let value = "\(account)-\(step)-on-\(device)"
                let edited = try security(device, ["add-generic-password", "-U", "--synchronizable", "-a", account, "-s", "fault.example", "-w", value])
                #expect(edited.status == 0, "\(edited.stderr)")
                model[account] = .some(value)
                edits += 1
            case 11:
                guard try password(device, account) != nil else { continue }
                #expect(try security(device, ["delete-generic-password", "--synchronizable", "-a", account, "-s", "fault.example"]).status == 0)
                model[account] = .some(nil)
                deletes += 1
            case 12..<17:
                _ = try security(device, ["sync", "now"])
            default:
                if random.next() % 3 == 0 {
                    // The server dies mid-stream and comes back on its database and port.
                    server.stop(signal: SIGKILL)
                    server = try devices.server(port: port)
                    serverKills += 1
                } else {
                    // A device's securityd dies during a round.
                    let round = try RunningCommand("security", ["sync", "now"], environment: devices.environment(device))
                    usleep(UInt32(random.next() % 40_000))
                    if let pid = DaemonControl.pid(home: devices.homes[device]) { kill(pid, SIGKILL) }
                    _ = round.finish()
                    kills += 1
                }
            }
        }
        try devices.roundsUntilQuiet()
        for device in devices.indices {
            for account in accounts {
                #expect(try password(device, account) == model[account] ?? nil, "seed \(seed), device \(device), \(account)")
            }
        }
        #expect(kills > 0 && serverKills > 0 && edits > 20 && deletes > 0, "seed \(seed): \(edits) edits, \(deletes) deletes, \(kills) securityd and \(serverKills) server kills")
    }
}
