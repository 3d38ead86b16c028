import BenchWorkload
import Foundation
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// One sitting: a keychain in a temporary directory, securityd and its enclave started
/// under callgrind by a client that itself runs under callgrind, filled, then each
/// operation run `warmUp` times uncounted and `operations` times counted in all three.
struct InstructionsMeasurement {
    var items = 1_000
    var operations = 200
    var warmUp = 20
    /// Keep each row's callgrind profile (callgrind.out.PID.N) in the directory, and the
    /// directory itself.
    var keepProfiles = false

    /// The order the rows run in: reads first, then the writes, the adds before the
    /// deletes that remove what they added.
    static let order: [Workload] = [.findAttributes, .findData, .findMissing, .update, .add, .delete]

    /// The row of the daemon's start (whole instructions, not per operation).
    static let startRow = "start to first find (whole)"

    func run(log: (String) -> Void) throws -> InstructionReport {
        var template = Array(((ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/keychain-instructions-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw WorkloadError("mkdtemp: \(String(cString: strerror(errno)))") }
        let directory = String(cString: made)
        defer {
            if keepProfiles { log("profiles kept in \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
        }
        let callgrind = try Callgrind(directory: directory)
        let securityd = ProcessExecutable.sibling("securityd")
        guard access(securityd, X_OK) == 0, access(ProcessExecutable.sibling("trousseau-enclave"), X_OK) == 0 else {
            throw WorkloadError("securityd and trousseau-enclave must be beside \(ProcessExecutable.path() ?? "this program") (scripts/bench-instructions puts them there)")
        }
        let home = directory + "/home"
        let client = try ClientProcess(
            valgrind: callgrind.valgrind,
            arguments: callgrind.arguments(followingChildren: false) + [
                ProcessExecutable.path() ?? "keychain-instructions", "client", "--home", home, "--daemon", try callgrind.daemonWrapper(securityd: securityd),
            ])
        defer { client.finish(daemonPIDFile: callgrind.daemonPIDFile) }

        // The start: all securityd and its enclave ran from exec to the answer of the client's
        // first find, on a new keychain (the keybag and the database made). Counted whole,
        // not per operation; the client's own start is not the row's (it is this program's).
        var clock = ContinuousClock.now
        try client.request("run", Workload.findMissing.rawValue, "1", "start", "0")
        let runs = try callgrind.runs()
        func serving(_ program: String) throws -> pid_t {
            guard let pid = runs.first(where: { $0.value.contains("/\(program) ") && $0.value.contains(home) })?.key else {
                throw WorkloadError("no \(program) of \(home) under callgrind (its log: \(directory)/valgrind.*.log)")
            }
            return pid
        }
        let pids = [try serving("securityd"), try serving("trousseau-enclave"), client.pid]
        client.enclave = pids[1]
        let start = try callgrind.instructions(Array(pids.prefix(2)))
        if keepProfiles { try callgrind.dump(Array(pids.prefix(2)), label: "start") }
        var rows = [InstructionRow(operation: Self.startRow, securityd: Int(start[pids[0]] ?? 0), enclave: Int(start[pids[1]] ?? 0), client: 0)]
        log("\(Self.startRow): \(ContinuousClock.now - clock)")

        clock = ContinuousClock.now
        try client.request("fill", String(items))
        log("filled \(items) items under callgrind in \(ContinuousClock.now - clock)")

        for workload in Self.order {
            clock = ContinuousClock.now
            try client.request("run", workload.rawValue, String(warmUp), "warm", String(items))
            try callgrind.zero(pids)
            try client.request("run", workload.rawValue, String(operations), "counted", String(items))
            let counts = try callgrind.instructions(pids)
            if keepProfiles { try callgrind.dump(pids, label: workload.rawValue) }
            let perOperation = pids.map { Int((Double(counts[$0] ?? 0) / Double(operations)).rounded()) }
            rows.append(InstructionRow(operation: workload.rawValue, securityd: perOperation[0], enclave: perOperation[1], client: perOperation[2]))
            log("\(workload.rawValue): \(ContinuousClock.now - clock)")
        }
        return InstructionReport(items: items, operations: operations, warmUp: warmUp, rows: rows)
    }
}

/// The client under callgrind, spoken to over a socketpair on its standard input and output.
final class ClientProcess {
    let pid: pid_t
    private let fd: Int32
    private var buffered: [UInt8] = []
    /// The enclave's process, once known: waited for when the measurement ends (its
    /// callgrind writes a file as it exits).
    var enclave: pid_t?

    init(valgrind: String, arguments: [String]) throws {
        let (ours, theirs) = try UnixSocket.pair()
        defer { close(theirs) }
        var environment = ProcessInfo.processInfo.environment
        // The same hash seeds in every run: Swift's Dictionary and Set would otherwise take
        // a different number of probes each time.
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        environment["TROUSSEAU_TPM"] = "off"
        environment["TROUSSEAU_SECURITYD_IDLE_SECONDS"] = "0"
        do {
            pid = try Spawn.process(
                valgrind, arguments: arguments, environment: environment,
                descriptors: Spawn.Descriptors(standardInput: .descriptor(theirs), standardOutput: .descriptor(theirs), standardError: .inherit))
        } catch {
            close(ours)
            throw error
        }
        fd = ours
    }

    /// Sends one request and waits for its answer.
    func request(_ fields: String...) throws {
        let line = Array((fields.joined(separator: String(InstructionsClient.separator)) + "\n").utf8)
        guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count else {
            throw WorkloadError("the client under callgrind is gone")
        }
        let answer = try readLine()
        guard answer == "ok" else { throw WorkloadError("the client answered \(fields[0]): \(answer)") }
    }

    private func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let n = read(fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw WorkloadError("the client under callgrind ended (its log is in the measurement's directory)") }
            buffered += chunk[..<n]
        }
    }

    /// Ends the client (end of its input) and securityd (SIGTERM to the process id its
    /// wrapper wrote; its enclave ends with it), and waits until none runs, so that the
    /// directory can go — on every path, failures included.
    func finish(daemonPIDFile: String) {
        close(fd)
        SystemCall.wait(pid)
        guard let text = try? String(contentsOfFile: daemonPIDFile, encoding: .utf8),
            let daemon = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        kill(daemon, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(60)
        for process in [daemon] + (enclave.map { [$0] } ?? []) {
            while kill(process, 0) == 0, ContinuousClock.now < deadline { usleep(20_000) }
        }
    }
}
