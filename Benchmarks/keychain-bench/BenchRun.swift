import BenchWorkload
import Foundation
import KeychainClient
import KeychainModel
import Security

/// One run of the benchmark: floors first, then each keychain size in turn (filled by
/// adding the difference), every operation at every client count, memory, and the
/// whole-process timings at the first size.
struct BenchRun {
    let plan: Plan
    let products: Products
    let keychain: BenchKeychain
    var report: BenchReport
    let output: Output

    mutating func run() throws {
        output.line("keychain-bench: \(report.machine.cpu), \(report.machine.cores) cores, \(report.machine.kernel)\(report.smoke ? " (smoke run: figures mean nothing)" : "")")
        try measureFloors()
        for (position, size) in plan.sizes.enumerated() {
            try measure(size: size)
            if position == 0, plan.wholeProcesses { try measureWholeProcesses(items: size) }
        }
        report.keys = try KeyOperations.measure(count: plan.keySamples)
        TrousseauKeychain.use(home: keychain.paths.home)  // the Security API's requests go to the bench's daemon
        report.keys.append(try KeyOperations.measureEnclave(count: max(plan.keySamples / 2, 1)))
        report.keys.append(try TrustOperation.measure(count: max(plan.keySamples / 4, 1)))
        report.keys += try FileKeychainOperations.measure(keychain, count: max(plan.keySamples / 4, 1))
        report.keys.append(try ProfileOperations.measure(keychain, security: products.security, count: max(plan.keySamples / 20, 1)))
        report.keys += try WindowOperations.measure(daemon: products.securityd, security: products.security, directory: keychain.directory, count: max(plan.keySamples / 10, 1))
        output.line("")
        output.line(Table.keys(report.keys))
        report.targets = Targets.evaluate(report)
        output.line("")
        output.line(Table.memory(report.memory))
        output.line("")
        output.line(Table.targets(report.targets))
    }

    private mutating func measureFloors() throws {
        let floors = [
            BenchReport.Floor(Floors.Name.socket, try Floors.socketRoundTrip(size: 128, count: plan.floorSamples)),
            BenchReport.Floor(Floors.Name.commit, try Floors.durableCommit(count: plan.commitSamples, in: keychain.directory)),
            BenchReport.Floor(Floors.Name.aes, try Floors.aesGCMOpen(size: BenchItems.secretSize, count: plan.floorSamples)),
            BenchReport.Floor(Floors.Name.spawn, try Floors.processSpawn(count: plan.runs)),
        ]
        report.floors += floors
        output.line("")
        output.line(Table.floors(floors))
    }

    private mutating func measure(size: Int) throws {
        output.line("")
        output.line("filling the keychain to \(size) items with \(plan.fillClients) clients…")
        if let fill = try keychain.fill(to: size, clients: plan.fillClients) {
            output.line("  \(fill.count) adds at \(Int(fill.throughput))/s")
        }
        let lookup = BenchReport.Floor(
            Floors.Name.lookup, items: size, try Floors.sqliteLookup(rows: size, count: plan.floorSamples, in: keychain.directory))
        report.floors.append(lookup)
        var rows: [BenchReport.Operation] = []
        for clients in plan.clients {
            let load = ConcurrentLoad(clients: try keychain.connect(clients))
            let tag = "\(size)-\(clients)"
            for workload in plan.workloads {
                let latencies = try load.run(operations: plan.operations) { share, n in
                    try workload.perform(client: share.client, offset: share.offset, n, items: size, tag: tag)
                }
                let floor = workload.floorParts.reduce(0.0) { sum, part in
                    sum + (report.floor(part, items: part == Floors.Name.lookup ? size : nil)?.p50Micros ?? 0)
                }
                rows.append(
                    BenchReport.Operation(
                        operation: workload.rawValue, items: size, clients: clients, samples: latencies.count,
                        opsPerSecond: latencies.throughput, p50Micros: latencies.p50, p99Micros: latencies.p99,
                        floor: workload.floorParts.joined(separator: " + "), floorMicros: floor, ratio: latencies.p50 / floor))
            }
        }
        report.operations += rows
        let memory = try measureMemory(items: size)
        report.memory.append(memory)
        output.line("")
        output.line(Table.operations(rows, size: size, lookup: lookup))
        output.line(
            "  securityd resident \(memory.daemonResidentKiB / 1024) MiB (peak \(memory.daemonPeakKiB / 1024) MiB), "
                + "enclave \(memory.enclaveResidentKiB / 1024) MiB, database \(memory.databaseBytes / 1_048_576) MiB"
                + (memory.staticRuntime.map { $0 ? " (Swift runtime linked in, as installed)" : " (Swift runtime loaded: not as installed; scripts/bench builds as installed)" } ?? ""))
    }

    private func measureMemory(items: Int) throws -> BenchReport.Memory {
        guard let daemon = keychain.daemonProcess(), let daemonMemory = BenchKeychain.memory(of: daemon) else {
            throw BenchError("securityd is not running")
        }
        let enclave = keychain.enclaveProcess().flatMap(BenchKeychain.memory(of:))
        return BenchReport.Memory(
            items: items, daemonResidentKiB: daemonMemory.resident, daemonPeakKiB: daemonMemory.peak,
            enclaveResidentKiB: enclave?.resident ?? 0, databaseBytes: keychain.databaseBytes(),
            staticRuntime: BenchKeychain.hasStaticRuntime(daemon))
    }

    /// The first call with no daemon running (it starts securityd and its enclave), and
    /// `security find-generic-password -w` as a whole process with the daemon running.
    private mutating func measureWholeProcesses(items: Int) throws {
        var autostart: [UInt64] = []
        for _ in 0..<plan.autostartRuns {
            try keychain.stopDaemon()
            let before = monotonicNanoseconds()
            var query = BenchItems.query(account: "item-0")
            query[QueryKey.returnData] = .bool(true)
            guard try keychain.connect().copyMatching(query) != nil else { throw BenchError("the first call returned nothing") }
            autostart.append(monotonicNanoseconds() - before)
        }
        let activated = try measureSocketActivatedFirstCalls()
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": keychain.paths.home]) { $1 }
        let arguments = ["find-generic-password", "-a", "item-0", "-s", BenchItems.service, "-w"]
        let tool = try Latencies.measure(plan.runs) { _ in
            let status = try ChildProcess.run(products.security, arguments, environment: environment)
            guard status == 0 else { throw BenchError("security find-generic-password -w exited \(status)") }
        }
        var processes = [BenchReport.WholeProcess(name: "first call, no daemon running", items: items, Latencies(autostart))]
        if !activated.isEmpty {
            processes.append(BenchReport.WholeProcess(name: "first call, socket-activated daemon", items: items, Latencies(activated)))
        }
        processes.append(BenchReport.WholeProcess(name: "security find-generic-password -w", items: items, tool))
        report.processes += processes
        output.line("")
        output.line(Table.processes(processes))
    }
}

extension BenchReport.WholeProcess {
    init(name: String, items: Int, _ latencies: Latencies) {
        self.init(
            name: name, items: items, runs: latencies.count, p50Millis: latencies.p50 / 1_000,
            maxMillis: latencies.percentile(100) / 1_000)
    }
}

extension BenchRun {
    /// The first call when systemd holds the socket and starts securityd on that
    /// connection, as the socket unit does: `systemd-socket-activate` (systemd's own tool
    /// for it, which needs no systemd running) listens on the keychain's socket and runs
    /// securityd with it as descriptor 3. Empty when the tool is not installed.
    mutating func measureSocketActivatedFirstCalls() throws -> [UInt64] {
        let tools: [String] = ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"]
        guard let activate = tools.first(where: { access($0, X_OK) == 0 }) else {
            return []
        }
        var latencies: [UInt64] = []
        for _ in 0..<plan.autostartRuns {
            try keychain.stopDaemon()
            unlink(keychain.paths.socket)
            mkdir(keychain.paths.socketDirectory, 0o700)
            let listener = try ChildProcess.spawn(
                activate, ["-l", keychain.paths.socket, "-E", "TROUSSEAU_SECURITYD_IDLE_SECONDS=0", products.securityd, "--home", keychain.paths.home],
                environment: ProcessInfo.processInfo.environment)
            let deadline = monotonicNanoseconds() + 10_000_000_000
            while access(keychain.paths.socket, F_OK) != 0 {
                guard monotonicNanoseconds() < deadline else { throw BenchError("systemd-socket-activate did not listen") }
                usleep(1_000)
            }
            let before = monotonicNanoseconds()
            var query = BenchItems.query(account: "item-0")
            query[QueryKey.returnData] = .bool(true)
            guard try keychain.connect().copyMatching(query) != nil else { throw BenchError("the first call returned nothing") }
            latencies.append(monotonicNanoseconds() - before)
            try keychain.stopDaemon()
            _ = ChildProcess.wait(listener)
        }
        return latencies
    }
}
