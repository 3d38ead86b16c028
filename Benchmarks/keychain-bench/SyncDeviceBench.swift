import BenchWorkload
import Foundation
import KeychainClient
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Two devices, each a keychain with its own securityd and enclave, syncing through the
/// trousseau-syncd being measured, set up as a user would (`security sync enable`, `pair
/// --approve`, `join`). Their timers are an hour long: what moves a change is the writer's
/// securityd sending soon after the commit and the reader's pulling on the server's hint.
///
/// Row: a synchronizable password changed through SecItem on one device until the other's
/// SecItemCopyMatching returns the new value (the reader asks every millisecond, which
/// bounds the row's resolution). Its floor is the server's own hinted change (a batch and a
/// pull over HTTP): the rest is the two daemons' rounds — the writer's commit, sealing in its
/// enclave, the reader's opening and applying.
struct SyncDeviceBench {
    let products: Products
    let directory: String
    let server: String
    let changes: Int

    func measure() throws -> Latencies {
        let environment = ["TROUSSEAU_SYNC_INTERVAL_SECONDS": "3600"]
        let writer = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: environment)
        let reader = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: environment)
        defer {
            for device in [writer, reader] {
                try? device.stopDaemon()
                device.remove()
            }
        }
        // The clients start each daemon with the long timer; `security` then finds it running.
        let writing = try writer.connect(), reading = try reader.connect()
        try security(writer, ["sync", "enable", "--server", server])
        try pair(writer, reader)

        var query = BenchItems.query(account: "visible")
        query[SecName.kSecAttrSynchronizable] = .bool(true)
        _ = try writing.add(BenchItems.addQuery(account: "visible", secret: BenchItems.secret(0)).merging(query) { $1 })
        try waitUntil(reading, query, reads: BenchItems.secret(0))
        return try Latencies.measure(changes) { index in
            let value = BenchItems.secret(index + 1)
            try writing.update(query, attributes: [QueryKey.valueData: .data(value)])
            try waitUntil(reading, query, reads: value)
        }
    }

    /// `security sync remove-device` on a member, `count` times: each time a new device joins
    /// (untimed), then the member removes it — the chain entry, the credential revoked, the
    /// keys rotated (a share to the other member, every class key held sealed again, the
    /// pointer) — timed from the command's start to its exit.
    func measureRemoval(count: Int) throws -> Latencies {
        let environment = ["TROUSSEAU_SYNC_INTERVAL_SECONDS": "3600"]
        let member = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: environment)
        let other = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: environment)
        defer {
            for device in [member, other] {
                try? device.stopDaemon()
                device.remove()
            }
        }
        _ = try member.connect()
        _ = try other.connect()
        try security(member, ["sync", "enable", "--server", server])
        try pair(member, other)
        var samples: [UInt64] = []
        var elapsed: UInt64 = 0
        for _ in 0..<count {
            let leaving = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: environment)
            defer {
                try? leaving.stopDaemon()
                leaving.remove()
            }
            _ = try leaving.connect()
            try pair(member, leaving)
            let status = try output(leaving, ["sync", "status"])
            guard let id = status.split(separator: "\n").first(where: { $0.hasPrefix("this device: ") })?.dropFirst("this device: ".count) else {
                throw BenchError("security sync status named no device")
            }
            // Only the removal is timed (the join before it is not).
            let started = monotonicNanoseconds()
            try security(member, ["sync", "remove-device", String(id)])
            samples.append(monotonicNanoseconds() - started)
            elapsed += samples.last!
        }
        return Latencies(samples, elapsedNanoseconds: elapsed)
    }

    /// What `security` printed on standard output.
    func output(_ device: BenchKeychain, _ arguments: [String]) throws -> String {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe failed") }
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": device.paths.home]) { $1 }
        let pid = try ChildProcess.spawn(products.security, arguments, environment: environment, standardOutput: fds[1])
        close(fds[1])
        defer { close(fds[0]) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        guard ChildProcess.wait(pid) == 0 else { throw BenchError("security \(arguments.joined(separator: " ")) failed") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Asks `client` every millisecond until the item of `query` holds `value` (10 s at most).
    func waitUntil(_ client: KeychainClient, _ query: [String: KeychainValue], reads value: Data) throws {
        var asking = query
        asking[QueryKey.returnData] = .bool(true)
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while monotonicNanoseconds() < deadline {
            if case .data(let found)? = try? client.copyMatching(asking), found == value { return }
            usleep(1_000)
        }
        throw BenchError("a change did not reach the other device within 10 s")
    }

    func security(_ device: BenchKeychain, _ arguments: [String]) throws {
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": device.paths.home]) { $1 }
        let status = try ChildProcess.run(products.security, arguments, environment: environment)
        guard status == 0 else { throw BenchError("security \(arguments.joined(separator: " ")) exited \(status)") }
    }

    /// `member` shows a code and approves whoever completes it; `newcomer` joins with it.
    func pair(_ member: BenchKeychain, _ newcomer: BenchKeychain) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe failed") }
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": member.paths.home]) { $1 }
        let pairing = try ChildProcess.spawn(products.security, ["sync", "pair", "--approve"], environment: environment, standardOutput: fds[1])
        close(fds[1])
        defer { close(fds[0]) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fds[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("code: ") else {
            ChildProcess.stop(pairing)
            throw BenchError("security sync pair printed no code")
        }
        try security(newcomer, ["sync", "join", "--server", server, String(text.dropFirst("code: ".count))])
        guard ChildProcess.wait(pairing) == 0 else { throw BenchError("security sync pair --approve failed") }
    }
}
