import BenchWorkload
import Foundation
import KeychainClient
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// A keychain in a temporary `KEYCHAIN_HOME`, served by the real securityd that the first
/// client starts (from beside this executable), filled with generic passwords named
/// ``BenchItems``.
final class BenchKeychain: @unchecked Sendable {
    // @unchecked: `count` is only changed by the one thread that drives the benchmark.
    let directory: String
    let paths: KeychainPaths
    let daemon: String
    /// How many `item-N` items the keychain holds.
    private(set) var count = 0

    /// What the daemon is started with besides `TROUSSEAU_SECURITYD_IDLE_SECONDS=0` (and
    /// `TROUSSEAU_TPM=off` unless it names a TPM: the rows measure the software backend, and
    /// `--tpm` its own swtpm, never the machine's TPM).
    let daemonEnvironment: [String: String]

    /// A new keychain in a temporary directory under `parent`.
    init(daemon: String, directory parent: String, daemonEnvironment: [String: String] = [:]) throws {
        self.daemonEnvironment = ["TROUSSEAU_TPM": "off"].merging(daemonEnvironment) { $1 }.merging(["TROUSSEAU_SECURITYD_IDLE_SECONDS": "0"]) { $1 }
        var template = Array((parent + "/keychain-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        paths = KeychainPaths(home: directory + "/home")
        self.daemon = daemon
    }

    /// A new connection, starting the daemon when none runs.
    func connect() throws -> KeychainClient {
        try KeychainClient.connect(paths, daemon: daemon, daemonEnvironment: daemonEnvironment)
    }

    func connect(_ clients: Int) throws -> [KeychainClient] {
        try (0..<clients).map { _ in try connect() }
    }

    // MARK: - Items

    /// Adds items until the keychain holds `target` of them, with `clients` connections.
    ///
    /// - Returns: the adds' latencies (nil when there was nothing to add).
    @discardableResult
    func fill(to target: Int, clients: Int) throws -> Latencies? {
        guard target > count else { return nil }
        let first = count
        let load = ConcurrentLoad(clients: try connect(clients))
        let latencies = try load.run(operations: target - first) { share, n in
            let index = first + share.offset + n
            _ = try share.client.add(BenchItems.addQuery(account: "item-\(index)", secret: BenchItems.secret(index)))
        }
        count = target
        return latencies
    }

    // MARK: - The daemon

    /// The securityd serving this keychain, if one runs.
    func daemonProcess() -> pid_t? {
        processes { words in words.contains { $0.hasSuffix("/securityd") } && words.contains(paths.home) }.first
    }

    /// The enclave serving this keychain, if one runs.
    func enclaveProcess() -> pid_t? {
        processes { words in words.contains { $0.hasSuffix("/trousseau-enclave") } && words.contains(paths.home) }.first
    }

    /// Stops the daemon (SIGTERM) and waits until neither it nor its enclave runs.
    func stopDaemon() throws {
        let running = [daemonProcess(), enclaveProcess()].compactMap { $0 }
        for pid in running { kill(pid, SIGTERM) }
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while running.contains(where: { kill($0, 0) == 0 && !Self.isZombie($0) }) {
            guard monotonicNanoseconds() < deadline else { throw BenchError("securityd did not stop within 20 s") }
            usleep(2_000)
        }
    }

    /// Resident memory of `pid` now and at its peak, in KiB (VmRSS, VmHWM).
    static func memory(of pid: pid_t) -> (resident: Int, peak: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) }
        }
        guard let resident = field("VmRSS"), let peak = field("VmHWM") else { return nil }
        return (resident, peak)
    }

    /// Whether the process runs with the Swift runtime linked in (as `scripts/install`
    /// builds it) rather than loaded from libswiftCore.so; nil when its maps cannot be read.
    static func hasStaticRuntime(_ pid: pid_t) -> Bool? {
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // read(2) to the end: /proc files report no size, and one page holds few mappings.
        let maps = Spawn.readAll(fd, limit: 1 << 24)
        return !String(decoding: maps, as: UTF8.self).contains("/libswiftCore.so")
    }

    /// Bytes of the database and its WAL.
    func databaseBytes() -> Int {
        [paths.database, paths.database + "-wal"].reduce(0) { total, file in
            var info = stat()
            return total + (stat(file, &info) == 0 ? Int(info.st_size) : 0)
        }
    }

    func remove() {
        try? stopDaemon()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func processes(_ matches: ([String]) -> Bool) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard !Self.isZombie(pid), let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return matches(cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
        }
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }  // gone
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }
}

/// A benchmark that cannot go on, and why.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
