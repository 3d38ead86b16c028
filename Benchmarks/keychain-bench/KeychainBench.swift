import BenchWorkload
import ArgumentParser
import Foundation
import KeychainClient
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// keychain-bench: latency, throughput, scale and memory of securityd, each operation set
/// against the floors it cannot beat, measured in the same run on the same machine.
@main
struct KeychainBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain-bench",
        abstract: "Benchmarks a real securityd in a temporary KEYCHAIN_HOME against this machine's floors.",
        discussion: """
            Build everything first (`swift build -c release`): the benchmark starts the securityd, \
            trousseau-enclave and security beside it. Prints tables and writes JSON.
            """)

    @Option(name: .long, parsing: .upToNextOption, help: "Keychain sizes (items).")
    var sizes: [Int] = [1_000]

    @Flag(name: .long, help: "Also measure at 100,000 and 1,000,000 items (minutes, about 1 GiB of disk).")
    var large = false

    @Option(name: .long, parsing: .upToNextOption, help: "Concurrent client counts.")
    var clients: [Int] = [1, 8, 32]

    @Option(name: .long, help: "Operations per measurement.")
    var operations = 2_000

    @Option(
        name: .long, parsing: .upToNextOption,
        help: "Only these operations (\(Workload.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", "))); for profiling.")
    var only: [String] = []

    @Option(name: .long, help: "Runs of each whole-process timing.")
    var runs = 50

    @Option(name: .long, help: "Where the JSON report goes.")
    var json = "keychain-bench.json"

    @Option(name: .long, help: "The directory for the temporary keychain (a real disk, not tmpfs, for durable figures).")
    var directory = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"

    @Flag(name: .long, help: "A quick run that checks every measurement works; its figures mean nothing.")
    var smoke = false

    @Flag(
        name: .long,
        help: "Instead: the Secret Service against gnome-keyring on one private bus (lookups, Ping, CreateItem, secret-tool lookup).")
    var secretService = false

    @Flag(name: .long, help: "Instead: the enclave on a TPM 2.0 (swtpm started here) beside the software backend: unlock, enclave-key sign, find with data.")
    var tpm = false

    @Flag(name: .long, help: "Instead: only the Keychain Access window's rows (keychain-access's list page and Show password, beside their floors).")
    var window = false

    @Flag(name: .long, help: "Instead: trousseau-syncd on SQLite (and on PostgreSQL with --postgres): batches, and a change visible to another device by hint and by polling.")
    var sync = false

    @Flag(
        name: .long,
        help: "Instead: 10,000 devices' WebSockets on two trousseau-syncd over PostgreSQL (--postgres), a write rate ramped until the p99 change-to-notification passes 1 s.")
    var syncScale = false

    @Option(name: .long, help: "With --sync: a PostgreSQL URL to measure on too (scripts/bench-sync starts a server of its own).")
    var postgres: String?

    @Flag(inversion: .prefixedNo, help: "With --secret-service: measure gnome-keyring too (when it is installed).")
    var peer = true

    @Flag(
        name: .long,
        help: "With --secret-service: gnome-keyring's items go to its session collection (in memory, no file rewritten per item), so it fills to 10,000 in minutes.")
    var peerInMemory = false

    @Option(name: .long, parsing: .upToNextOption, help: "With --secret-service: the sizes both providers are filled to.")
    var secretServiceSizes: [Int] = []

    @Option(name: .long, parsing: .upToNextOption, help: "With --secret-service: the sizes only Trousseau is filled to.")
    var trousseauSizes: [Int] = []

    static func main() {
        // The socket floor's other end is this same executable.
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == EchoPeer.argument, let size = Int(arguments[2]) {
            EchoPeer.serve(size: size)
        }
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    func validate() throws {
        guard (sizes + clients + secretServiceSizes + trousseauSizes).allSatisfy({ $0 > 0 }), operations > 0, runs > 0 else {
            throw ValidationError("sizes, clients, operations and runs must be positive")
        }
        if let unknown = only.first(where: { Workload(rawValue: $0) == nil }) {
            throw ValidationError("no operation '\(unknown)'")
        }
    }

    mutating func run() throws {
        var plan = Plan(sizes: large ? sizes + [100_000, 1_000_000] : sizes, clients: clients, operations: operations, runs: runs)
        if smoke { plan = .smoke }
        if !only.isEmpty {
            plan.workloads = only.compactMap(Workload.init(rawValue:))
            plan.wholeProcesses = false
        }
        let products = try Products()
        let keychain = try BenchKeychain(daemon: products.securityd, directory: directory)
        defer { keychain.remove() }
        var report = BenchReport(
            machine: .current(directory: directory), date: ISO8601DateFormatter().string(from: Date()), smoke: smoke)
        if sync {
            let output = Output()
            output.line("keychain-bench --sync\(smoke ? " (smoke run: figures mean nothing)" : "")")
            var bench = SyncBench(plan: smoke ? .smoke : .full, products: products, directory: directory, output: output)
            try bench.run(postgres: postgres)
            report.sync = bench.rows
            report.targets = Targets.sync(bench.rows)
            output.line("")
            output.line(Table.sync(report.sync))
            output.line("")
            output.line(Table.targets(report.targets))
        } else if syncScale {
            guard let postgres else { throw ValidationError("--sync-scale needs --postgres URL (scripts/bench-sync-scale starts a server of its own)") }
            let output = Output()
            output.line("keychain-bench --sync-scale\(smoke ? " (smoke run: figures mean nothing)" : "")")
            report.syncScale = try SyncScaleBench(plan: smoke ? .smoke : .full, postgres: postgres, output: output).run()
        } else if tpm {
            let output = Output()
            output.line("keychain-bench --tpm\(smoke ? " (smoke run: figures mean nothing)" : "")")
            report.keys = try TPMBench.measure(products: products, directory: keychain.directory, count: smoke ? 20 : plan.keySamples)
            output.line("")
            output.line(Table.keys(report.keys))
        } else if window {
            let output = Output()
            output.line("keychain-bench --window\(smoke ? " (smoke run: figures mean nothing)" : "")")
            report.keys = try WindowOperations.measure(
                daemon: products.securityd, security: products.security, directory: keychain.directory, count: smoke ? 20 : max(plan.keySamples / 10, 1))
            output.line("")
            output.line(Table.keys(report.keys))
        } else if secretService {
            report.secretService = try measureSecretService(products: products, keychain: keychain)
            report.targets = Targets.secretService(report.secretService)
        } else {
            var runner = BenchRun(plan: plan, products: products, keychain: keychain, report: report, output: Output())
            try runner.run()
            report = runner.report
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        print("\nJSON: \(json)")
    }
}

extension KeychainBench {
    /// The Secret Service rows and their targets.
    func measureSecretService(products: Products, keychain: BenchKeychain) throws -> [BenchReport.SecretServiceRow] {
        var plan = smoke ? SecretServiceBench.Plan.smoke : .full
        if !secretServiceSizes.isEmpty { plan.sizes = secretServiceSizes }
        if !trousseauSizes.isEmpty { plan.trousseauSizes = trousseauSizes }
        if !smoke { plan.lookups = operations }
        let output = Output()
        output.line("keychain-bench --secret-service\(smoke ? " (smoke run: figures mean nothing)" : "")")
        plan.peer = peer
        plan.peerInMemory = peerInMemory
        var bench = SecretServiceBench(plan: plan, products: products, keychain: keychain, output: output)
        try bench.run()
        output.line("")
        output.line(Table.targets(Targets.secretService(bench.rows)))
        return bench.rows
    }
}

/// What to measure: sizes, client counts and how many of each.
struct Plan: Sendable {
    var sizes: [Int]
    var clients: [Int]
    var operations: Int
    var runs: Int
    var workloads = Workload.allCases
    /// Autostart and `security` timings (left out when profiling one operation).
    var wholeProcesses = true
    var floorSamples = 20_000
    var commitSamples = 500
    var autostartRuns = 10
    var keySamples = 2_000
    /// Connections that fill the keychain.
    var fillClients = 8

    /// Enough of everything to exercise every code path, in seconds.
    static let smoke = Plan(
        sizes: [100, 300], clients: [1, 4], operations: 40, runs: 3, floorSamples: 200, commitSamples: 20, autostartRuns: 2,
        keySamples: 20, fillClients: 4)
}

/// The programs the benchmark runs: built beside it.
struct Products: Sendable {
    let securityd: String
    let security: String

    init() throws {
        securityd = KeychainClient.defaultDaemon  // $TROUSSEAU_SECURITYD (a profiler's wrapper) or beside us
        security = ProcessExecutable.sibling("security")
        for program in [securityd, security, ProcessExecutable.sibling("trousseau-enclave")]
        where access(program, X_OK) != 0 {
            throw BenchError("\(program) is missing: run `swift build -c release` (or `swift build`) first")
        }
    }
}

/// Printing as the run goes (standard output, flushed per line).
struct Output: Sendable {
    func line(_ text: String) {
        print(text)
        fflush(nil)  // all streams: `stdout` is global mutable state to Swift 6
    }
}
