import BenchWorkload
import Dispatch
import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// `keychain-bench --secret-service`: Trousseau's Secret Service against gnome-keyring, in
/// one run, on one private bus (a real dbus-daemon), with one client (``SecretServiceClient``).
/// gnome-keyring serves first (its login keyring, unlocked with a password), then Trousseau
/// (a real securityd taking the bus over); each is filled to every size through
/// `CreateItem`, then measured: a lookup (`SearchItems`, then `GetSecret`) beside a `Ping` to the
/// same provider through the same bus, and `secret-tool lookup` as a whole process.
struct SecretServiceBench {
    struct Plan: Sendable {
        /// Sizes both providers are measured at.
        var sizes: [Int]
        /// Sizes only Trousseau is measured at (gnome-keyring takes hours to fill to them).
        var trousseauSizes: [Int]
        var lookups: Int
        var pings: Int
        var processRuns: Int
        var fillClients = 4
        /// Whether gnome-keyring is measured too.
        var peer = true
        /// Whether gnome-keyring's items go to its session collection: kept in memory as its
        /// unlocked login keyring keeps them, but with no keyring file rewritten per item
        /// (and created with replace false), so it fills to 10,000 items in minutes rather
        /// than 45 (its `CreateItem` still grows with the collection: 100,000 takes hours).
        var peerInMemory = false

        static let full = Plan(sizes: [1_000, 10_000], trousseauSizes: [100_000], lookups: 2_000, pings: 5_000, processRuns: 50)
        static let smoke = Plan(sizes: [30, 60], trousseauSizes: [100], lookups: 30, pings: 100, processRuns: 3, fillClients: 2)
    }

    static let gnomeKeyring = "gnome-keyring"
    static let trousseau = "Trousseau"

    let plan: Plan
    let products: Products
    let keychain: BenchKeychain
    let output: Output
    var rows: [BenchReport.SecretServiceRow] = []

    init(plan: Plan, products: Products, keychain: BenchKeychain, output: Output) {
        self.plan = plan
        self.products = products
        self.keychain = keychain
        self.output = output
    }

    mutating func run() throws {
        let bus = try PrivateBus(directory: keychain.directory)
        defer { bus.stop() }
        output.line("a private bus at \(bus.address)")
        if plan.peer, let daemon = ["/usr/bin/gnome-keyring-daemon", "/bin/gnome-keyring-daemon"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            let peer = try startGnomeKeyring(daemon, bus: bus)
            defer { ChildProcess.stop(peer) }
            try measure(
                Self.gnomeKeyring, sizes: plan.sizes, bus: bus, process: { peer },
                fillInto: plan.peerInMemory ? SecretServiceClient.sessionCollection : SecretServiceClient.defaultCollection)
        } else {
            output.line("gnome-keyring: not measured (--no-peer, or not installed)")
        }
        try startTrousseau(bus: bus)
        try measure(Self.trousseau, sizes: plan.sizes + plan.trousseauSizes, bus: bus, process: keychain.daemonProcess)
        output.line("")
        output.line(Table.secretService(rows))
    }

    // MARK: - Providers

    /// gnome-keyring-daemon on the bus, its login keyring made and unlocked with a password
    /// given on standard input (as PAM gives it), in a home of its own.
    private func startGnomeKeyring(_ daemon: String, bus: PrivateBus) throws -> pid_t {
        let home = keychain.directory + "/gnome-keyring"
        for directory in [home, home + "/data", home + "/runtime"] { mkdir(directory, 0o700) }
        let environment = [
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_RUNTIME_DIR": home + "/runtime",
            "PATH": "/usr/bin:/bin",
        ]
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        // The daemon reads the password to its end: it must not inherit the write end too.
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        let pid = try ChildProcess.spawn(
            daemon, ["--foreground", "--unlock", "--components=secrets"], environment: environment, standardInput: pipeEnds[0])
        close(pipeEnds[0])
        let password = Array("bench keyring password".utf8)
        _ = password.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) }
        close(pipeEnds[1])
        try waitForProvider(bus: bus, what: "gnome-keyring-daemon")
        return pid
    }

    /// The bench keychain's securityd, asked to serve the bus by `securityd --secret-service`
    /// (what the bus's activation file runs), as when a session's daemon already runs.
    private func startTrousseau(bus: PrivateBus) throws {
        _ = try keychain.connect()
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let status = try ChildProcess.run(products.securityd, ["--secret-service", "--home", keychain.paths.home], environment: environment)
        guard status == 0 else { throw BenchError("securityd --secret-service exited \(status)") }
        try waitForProvider(bus: bus, what: "securityd")
    }

    private func waitForProvider(bus: PrivateBus, what: String) throws {
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while SecretServiceClient.owner(address: bus.address) == nil {
            guard monotonicNanoseconds() < deadline else { throw BenchError("\(what) did not take org.freedesktop.secrets") }
            usleep(20_000)
        }
    }

    // MARK: - Measurements

    /// `process` names the provider's process, whose resident memory each row reports;
    /// `fillInto` the collection its items are created in.
    private mutating func measure(
        _ provider: String, sizes: [Int], bus: PrivateBus, process: () -> pid_t?, fillInto collection: String = SecretServiceClient.defaultCollection
    ) throws {
        let client = try SecretServiceClient(address: bus.address)
        let inMemory = collection == SecretServiceClient.sessionCollection
        output.line("")
        output.line("\(provider) (\(client.provider))" + (inMemory ? ", items in its session collection (in memory)" : ""))
        let busRoundTrip = try Latencies.measure(plan.pings) { _ in try client.pingBus() }
        output.line("  bus daemon round trip (GetId): \(Table.micros(busRoundTrip.p50)) µs p50")
        var count = 0
        for size in sizes.sorted() {
            let store = try fill(from: count, to: size, address: bus.address, collection: collection, replace: !inMemory)
            output.line("  filled to \(Table.grouped(size)) items: \(store.count) CreateItem at \(Table.micros(store.p50)) µs p50")
            count = size
            let ping = try Latencies.measure(plan.pings) { _ in try client.ping() }
            var generator = SplitMix64(seed: UInt64(size))
            var searches: [UInt64] = []
            let lookup = try Latencies.measure(plan.lookups) { _ in
                let index = Int(generator.next() % UInt64(size))
                let before = monotonicNanoseconds()
                let items = try client.searchItems(Self.attributes(index))
                searches.append(monotonicNanoseconds() - before)
                guard items.count == 1 else { throw BenchError("\(provider): item-\(index) found \(items.count) times") }
                guard try client.secret(of: items[0]) == Self.secret(index) else { throw BenchError("\(provider): item-\(index) has another secret") }
            }
            let search = Latencies(searches)
            let lockedQuery = try Latencies.measure(plan.lookups) { _ in
                guard try !client.isLocked(collection) else { throw BenchError("\(provider): \(collection) is locked") }
            }
            let tool = try Latencies.measure(plan.processRuns) { run in
                let status = try ChildProcess.run(
                    "/usr/bin/secret-tool", ["lookup"] + Self.attributes(run % size).sorted(by: { $0.key < $1.key }).flatMap { [$0.key, $0.value] },
                    environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin", "HOME": keychain.directory])
                guard status == 0 else { throw BenchError("secret-tool lookup exited \(status) against \(provider)") }
            }
            // Trousseau only: gnome-keyring's CreateCollection waits for its prompter.
            var scratch: Latencies?
            if provider == Self.trousseau {
                scratch = try Latencies.measure(max(1, plan.lookups / 4)) { run in
                    let collection = try client.createCollection(label: "Scratch")
                    try client.createItem(in: collection, label: "scratch", attributes: ["scratch": "\(run)"], secret: Self.secret(run))
                    try client.deleteCollection(collection)
                }
            }
            var row = BenchReport.SecretServiceRow(
                provider: provider, items: size, lookups: lookup.count, lookupP50Micros: lookup.p50, lookupP99Micros: lookup.p99,
                searchP50Micros: search.p50, pingP50Micros: ping.p50, busP50Micros: busRoundTrip.p50, ratio: lookup.p50 / ping.p50,
                storeP50Micros: store.count > 0 ? store.p50 : nil, storeP99Micros: store.count > 0 ? store.p99 : nil,
                secretToolP50Millis: tool.p50 / 1_000, secretToolMaxMillis: tool.percentile(100) / 1_000)
            row.scratchCollectionP50Micros = scratch?.p50
            row.inMemory = inMemory
            row.lockedP50Micros = lockedQuery.p50
            row.providerResidentKiB = process().flatMap(BenchKeychain.memory(of:))?.resident
            rows.append(row)
            output.line(
                "  \(Table.grouped(size)) items: lookup \(Table.micros(lookup.p50)) µs p50 (SearchItems \(Table.micros(search.p50)) µs; Ping \(Table.micros(ping.p50)) µs, "
                    + String(format: "%.2f×", row.ratio) + "), secret-tool lookup " + String(format: "%.2f ms", row.secretToolP50Millis)
                    + ", Get Locked \(Table.micros(lockedQuery.p50)) µs"
                    + (row.providerResidentKiB.map { ", resident \($0 / 1024) MiB" } ?? ""))
        }
    }

    /// Adds items `from..<to` to `collection` through `CreateItem` with the plan's clients,
    /// each on its own connection; returns the calls' latencies.
    private func fill(from: Int, to: Int, address: String, collection: String, replace: Bool) throws -> Latencies {
        guard to > from else { return Latencies([]) }
        let clients = max(1, min(plan.fillClients, to - from))
        let results = BlockingMutex<(samples: [UInt64], error: (any Error)?)>(([], nil))
        let start = monotonicNanoseconds()
        DispatchQueue.concurrentPerform(iterations: clients) { lane in
            do {
                let client = try SecretServiceClient(address: address)
                var samples: [UInt64] = []
                for index in stride(from: from + lane, to: to, by: clients) {
                    let before = monotonicNanoseconds()
                    try client.createItem(
                        in: collection, label: "item-\(index)", attributes: Self.attributes(index), secret: Self.secret(index), replace: replace)
                    samples.append(monotonicNanoseconds() - before)
                }
                results.withLock { $0.samples += samples }
            } catch {
                results.withLock { $0.error = error }
            }
        }
        let (samples, error) = results.withLock { ($0.samples, $0.error) }
        if let error { throw error }
        return Latencies(samples, elapsedNanoseconds: monotonicNanoseconds() - start)
    }

    static func attributes(_ index: Int) -> [String: String] {
        ["service": BenchItems.service, "account": "item-\(index)"]
    }

    static func secret(_ index: Int) -> [UInt8] { Array(BenchItems.secret(index)) }
}

/// A private session bus: a real dbus-daemon on a socket in the bench's directory.
final class PrivateBus {
    let address: String
    private let pid: pid_t

    init(directory: String) throws {
        let socket = directory + "/bus"
        let configuration = directory + "/bus.conf"
        try """
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        guard let daemon = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchError("dbus-daemon is not installed (scripts/install-deps installs it)")
        }
        pid = try ChildProcess.spawn(daemon, ["--nofork", "--nopidfile", "--config-file=" + configuration], environment: ["PATH": "/usr/bin:/bin"])
        address = "unix:path=" + socket
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while access(socket, F_OK) != 0 {
            guard monotonicNanoseconds() < deadline else { throw BenchError("dbus-daemon did not listen") }
            usleep(10_000)
        }
    }

    func stop() { ChildProcess.stop(pid) }
}
