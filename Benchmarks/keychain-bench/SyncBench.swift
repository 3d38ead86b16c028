import Dispatch
import Foundation
import HummingbirdWSClient
import KeychainModel
import KeychainSystem
import Logging
import PostgresKit
import SyncProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `keychain-bench --sync`: trousseau-syncd (the release build beside us) on a SQLite file in
/// `--directory`, and on PostgreSQL when given `--postgres URL` (scripts/bench-sync starts
/// one), each measured against its floors in the same run: an HTTP round trip to the same
/// server (a 404 that touches no database) and the database's own durable commit.
///
/// Rows: a device's enclave sealing and opening an item record; a conditional batch of one
/// write (one client, then several), a batch of 100 writes, and a change made by one device
/// visible to another — told by a WebSocket hint, or found by polling — and the same between
/// two devices' securityd (``SyncDeviceBench``).
struct SyncBench {
    struct Plan: Sendable {
        var batches: Int
        var clients: Int
        var largeBatches: Int
        var visible: Int
        var polled: Int
        var pollInterval: Duration
        var floorSamples: Int
        var engineItems: Int
        var deviceChanges: Int
        var removals: Int

        static let full = Plan(
            batches: 2_000, clients: 8, largeBatches: 200, visible: 300, polled: 40, pollInterval: .milliseconds(250), floorSamples: 2_000, engineItems: 10_000,
            deviceChanges: 100, removals: 10)
        static let smoke = Plan(
            batches: 30, clients: 2, largeBatches: 5, visible: 5, polled: 3, pollInterval: .milliseconds(100), floorSamples: 30, engineItems: 150, deviceChanges: 3, removals: 1)
    }

    let plan: Plan
    let products: Products
    let directory: String
    let output: Output
    var rows: [BenchReport.SyncRow] = []

    mutating func run(postgres: String?) throws {
        let syncd = ProcessExecutable.sibling("trousseau-syncd")
        guard access(syncd, X_OK) == 0 else {
            throw BenchError("\(syncd) is missing: run `swift build -c release --product trousseau-syncd` first")
        }
        let sqlite = directory + "/bench-sync-\(getpid()).sqlite"
        defer {
            for suffix in ["", "-wal", "-shm"] { unlink(sqlite + suffix) }
        }
        try measureEnclave()
        let commit = try Floors.durableCommit(count: plan.floorSamples / 4, in: directory)
        try measure("SQLite", database: ["--database", sqlite], commitFloor: commit, syncd: syncd)
        if let postgres {
            let (commit, statement) = try Self.postgresFloors(url: postgres, count: plan.floorSamples / 4)
            try measure("PostgreSQL", database: ["--postgres", postgres], commitFloor: commit, syncd: syncd, statementFloor: statement)
        } else {
            output.line("PostgreSQL: not measured (give --postgres URL, or run scripts/bench-sync)")
        }
    }

    mutating func measure(_ backend: String, database: [String], commitFloor: Latencies, syncd: String, statementFloor: Latencies? = nil) throws {
        let server = try SyncServerProcess(syncd, database + ["--open-registration"])
        defer { server.stop() }
        let client = SyncHTTPClient(port: server.port)
        let writer = Data((0..<32).map { UInt8($0) }), reader = Data((32..<64).map { UInt8($0) })
        try client.expect(201, client.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: SyncIdentifier("bench")!, device: SyncIdentifier("writer")!, token: writer)))
        try client.expect(201, client.send("POST", "/v1/devices", token: writer, body: RegisterDeviceRequest(device: SyncIdentifier("reader")!, token: reader)))
        output.line("\(backend): trousseau-syncd on port \(server.port)")

        let roundTrip = try Latencies.measure(plan.floorSamples) { _ in try client.expect(404, client.send("GET", "/v1/bench-floor")) }
        let floor = roundTrip.p50 + commitFloor.p50
        let floorName = "HTTP round trip + \(backend) commit"
        func row(_ operation: String, clients: Int, _ latencies: Latencies, floor: Double, floorName: String) -> BenchReport.SyncRow {
            BenchReport.SyncRow(
                backend: backend, operation: operation, clients: clients, samples: latencies.count, opsPerSecond: latencies.throughput,
                p50Micros: latencies.p50, p99Micros: latencies.p99, floor: floorName, floorMicros: floor, ratio: latencies.p50 / floor)
        }
        rows.append(row("floor: HTTP round trip (404, no database)", clients: 1, roundTrip, floor: roundTrip.p50, floorName: "itself"))
        rows.append(row("floor: \(backend) durable commit", clients: 1, commitFloor, floor: commitFloor.p50, floorName: "itself"))
        if let statementFloor {
            // Where a batch's time goes on PostgreSQL: each of its statements is a round trip.
            rows.append(row("floor: \(backend) statement round trip (SELECT 1)", clients: 1, statementFloor, floor: statementFloor.p50, floorName: "itself"))
        }

        // One write a batch, one client: each record written once, at version 1.
        let single = try Latencies.measure(plan.batches) { index in
            try client.expect(200, client.batch(token: writer, zone: "z1", records: ["s\(index)"]))
        }
        rows.append(row("batch, 1 write", clients: 1, single, floor: floor, floorName: floorName))

        // Several clients at once, each its own records: the server's throughput.
        let perClient = max(1, plan.batches / plan.clients)
        let concurrent = try Self.concurrently(plan.clients, perClient) { clientIndex, index in
            try client.expect(200, client.batch(token: writer, zone: "z2", records: ["c\(clientIndex)-\(index)"]))
        }
        rows.append(row("batch, 1 write", clients: plan.clients, concurrent, floor: floor, floorName: floorName))

        let large = try Latencies.measure(plan.largeBatches) { index in
            try client.expect(200, client.batch(token: writer, zone: "z3", records: (0..<100).map { "l\(index)-\($0)" }))
        }
        rows.append(row("batch, 100 writes", clients: 1, large, floor: floor, floorName: floorName))

        // A change visible to another device: told by a hint, then one pull.
        let socket = try HintSocket(url: "ws://127.0.0.1:\(server.port)/v1/notify", token: reader)
        defer { socket.close() }
        var high: Int64 = 0
        let hinted = try Latencies.measure(plan.visible) { index in
            try client.expect(200, client.batch(token: writer, zone: "z4", records: ["h\(index)"]))
            while true {
                guard let hint = socket.next(timeout: 10) else { throw BenchError("no hint within 10 s") }
                // A late hint of an earlier zone's writes is skipped.
                if hint.zone?.rawValue == "z4", hint.seq > high { break }
            }
            let changes = try client.changes(token: reader, zone: "z4", after: high)
            guard changes.records.contains(where: { $0.record.rawValue == "h\(index)" }) else { throw BenchError("the hinted change was not in the feed") }
            high = changes.high
        }
        let visibleFloor = single.p50 + roundTrip.p50
        rows.append(row("change visible elsewhere, WebSocket hint", clients: 1, hinted, floor: visibleFloor, floorName: "batch + HTTP round trip"))

        // The same found by polling: the reader pulls every interval.
        let interval = plan.pollInterval
        let intervalMicros = UInt32(interval / .microseconds(1))
        high = 0
        let polled = try Latencies.measure(plan.polled) { index in
            try client.expect(200, client.batch(token: writer, zone: "z5", records: ["p\(index)"]))
            // The reader's next pull comes at a random point of its cycle, as it would.
            usleep(UInt32.random(in: 0..<intervalMicros))
            while true {
                let changes = try client.changes(token: reader, zone: "z5", after: high)
                high = max(high, changes.high)
                if changes.records.contains(where: { $0.record.rawValue == "p\(index)" }) { break }
                usleep(intervalMicros)
            }
        }
        rows.append(row("change visible elsewhere, polling every \(interval)", clients: 1, polled, floor: visibleFloor, floorName: "batch + HTTP round trip"))

        // The same between two devices' securityd, as an app sees it.
        let devices = SyncDeviceBench(products: products, directory: directory, server: "http://127.0.0.1:\(server.port)", changes: plan.deviceChanges)
        rows.append(row("change visible on another device (securityd, SecItem), hint", clients: 1, try devices.measure(), floor: hinted.p50, floorName: "hinted change over HTTP"))
        // Removing a device: a round's pull, the chain's entry, the revocation, the rotation's
        // batch — four requests that each commit, at the least.
        rows.append(row(
            "device removed, keys rotated (security sync remove-device)", clients: 1, try devices.measureRemoval(count: plan.removals), floor: 4 * floor,
            floorName: "4 × (\(floorName))"))

        // The engine: a device's queue sent, and a new device's first sync, through this server.
        let engine = SyncEngineBench(items: plan.engineItems, directory: directory, port: server.port, writerToken: writer, readerToken: reader)
        rows += try engine.measure(backend: backend, roundTrip: roundTrip, commit: commitFloor)
        for row in rows where row.backend == backend {
            output.line(String(format: "  %@, %d client(s): p50 %.0f µs, p99 %.0f µs, %.0f/s", row.operation, row.clients, row.p50Micros, row.p99Micros, row.opsPerSecond))
        }
    }

    /// `count` operations on each of `clients` threads at once; latencies of all, elapsed wall time.
    static func concurrently(_ clients: Int, _ count: Int, _ body: @escaping @Sendable (Int, Int) throws -> Void) throws -> Latencies {
        let results = BlockingMutex<(samples: [UInt64], error: (any Error)?)>(([], nil))
        let start = monotonicNanoseconds()
        DispatchQueue.concurrentPerform(iterations: clients) { clientIndex in
            do {
                let samples = try Latencies.measure(count) { try body(clientIndex, $0) }.sorted
                results.withLock { $0.samples += samples }
            } catch {
                results.withLock { $0.error = error }
            }
        }
        let elapsed = monotonicNanoseconds() - start
        let (samples, error) = results.withLock { ($0.samples, $0.error) }
        if let error { throw error }
        return Latencies(samples, elapsedNanoseconds: elapsed)
    }

    /// PostgreSQL's own durable commit over the same socket (one row inserted, autocommit),
    /// and one statement's round trip (`SELECT 1`).
    static func postgresFloors(url: String, count: Int) throws -> (commit: Latencies, statement: Latencies) {
        try blocking {
            let configuration = try SQLPostgresConfiguration(url: url)
            let connection = try await PostgresConnection.connect(configuration: configuration.coreConfiguration, id: 9, logger: Logger(label: "bench"))
            let database = connection.sql(queryLogLevel: nil)
            try await database.raw("CREATE TABLE IF NOT EXISTS bench_floor (id BIGSERIAL PRIMARY KEY, meta BYTEA NOT NULL)").run()
            let meta = Data(repeating: 0xa5, count: 352)
            var samples: [UInt64] = []
            let start = monotonicNanoseconds()
            for _ in 0..<count {
                let before = monotonicNanoseconds()
                try await database.raw("INSERT INTO bench_floor (meta) VALUES (\(bind: meta))").run()
                samples.append(monotonicNanoseconds() - before)
            }
            let elapsed = monotonicNanoseconds() - start
            var statements: [UInt64] = []
            let statementStart = monotonicNanoseconds()
            for _ in 0..<count {
                let before = monotonicNanoseconds()
                _ = try await database.raw("SELECT 1 AS one").all()
                statements.append(monotonicNanoseconds() - before)
            }
            let statementElapsed = monotonicNanoseconds() - statementStart
            try await database.raw("DROP TABLE bench_floor").run()
            try await connection.close()
            return (Latencies(samples, elapsedNanoseconds: elapsed), Latencies(statements, elapsedNanoseconds: statementElapsed))
        }
    }
}

/// Runs async work from the benchmark's synchronous code (its main thread, never a thread of
/// the cooperative pool).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = BlockingMutex<Result<T, any Error>?>(nil)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        box.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try box.withLock { $0 }!.get()
}

/// trousseau-syncd started on a free loopback port (its log discarded: it logs no request).
final class SyncServerProcess {
    let pid: pid_t
    let port: Int

    init(_ path: String, _ arguments: [String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe failed") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // the child gets its copy through dup2
        do {
            pid = try ChildProcess.spawn(
                path, ["--host", "127.0.0.1", "--port", "0"] + arguments, environment: ProcessInfo.processInfo.environment,
                standardOutput: fds[1])
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        var line = [UInt8]()
        var byte: UInt8 = 0
        while read(fds[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        close(fds[0])
        guard let port = String(decoding: line, as: UTF8.self).split(separator: ":").last.flatMap({ Int($0) }) else {
            ChildProcess.stop(pid)
            throw BenchError("trousseau-syncd did not start: \(String(decoding: line, as: UTF8.self))")
        }
        self.port = port
    }

    func stop() { ChildProcess.stop(pid) }
}

/// The benchmark's HTTP client: URLSession, one request at a time per call.
struct SyncHTTPClient: Sendable {
    let port: Int

    func send(_ method: String, _ path: String, token: Data? = nil, json: Data? = nil) throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)" + path)!)
        request.httpMethod = method
        if let token { request.setValue("Bearer " + token.base64EncodedString(), forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = json
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let sending = request
        return try blocking {
            let (data, response) = try await URLSession.shared.data(for: sending)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
        }
    }

    func send(_ method: String, _ path: String, token: Data? = nil, body: some Encodable) throws -> (status: Int, body: Data) {
        try send(method, path, token: token, json: try JSONEncoder().encode(body))
    }

    /// A batch writing each of `records` at version 1.
    func batch(token: Data, zone: String, records: [String]) throws -> (status: Int, body: Data) {
        let writes = records.map { SyncRecord(record: SyncIdentifier($0)!, type: 1, version: 1, body: Data(repeating: 0x5c, count: 256)) }
        return try send("POST", "/v1/zones/\(zone)/batch", token: token, body: BatchRequest(writes: writes))
    }

    func changes(token: Data, zone: String, after: Int64) throws -> ChangesResponse {
        let answer = try send("GET", "/v1/zones/\(zone)/changes?after=\(after)", token: token)
        try expect(200, answer)
        return try JSONDecoder().decode(ChangesResponse.self, from: answer.body)
    }

    func expect(_ status: Int, _ answer: (status: Int, body: Data)) throws {
        guard answer.status == status else {
            throw BenchError("expected HTTP \(status), got \(answer.status): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
        }
    }
}

/// A reader's `/v1/notify` socket: hints as they come, read from synchronous code.
final class HintSocket: @unchecked Sendable {
    private let hints = LockedQueue<ChangeHint>()
    private let closing: AsyncStream<Void>.Continuation
    private let task: Task<Void, any Error>

    init(url: String, token: Data) throws {
        let (closeRequests, closing) = AsyncStream.makeStream(of: Void.self)
        self.closing = closing
        let hints = self.hints
        task = Task {
            try await WebSocketClient.connect(
                url: url, configuration: .init(additionalHeaders: [.authorization: "Bearer " + token.base64EncodedString()]), logger: Logger(label: "bench")
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 4096) {
                            guard case .text(let text) = message, let hint = try? JSONDecoder().decode(ChangeHint.self, from: Data(text.utf8)) else { continue }
                            hints.push(hint)
                        }
                    }
                    group.addTask {
                        for await _ in closeRequests { break }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
        guard next(timeout: 10) == .subscribed else {
            task.cancel()
            throw BenchError("the hint socket did not subscribe")
        }
    }

    /// The next hint, waiting up to `timeout` seconds.
    func next(timeout: Double) -> ChangeHint? { hints.pop(timeout: timeout) }

    func close() {
        closing.yield()
        _ = try? blocking { [task] in try await task.value }
    }
}

/// A queue one thread pushes to and another waits on.
final class LockedQueue<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [T] = []

    func push(_ item: T) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func pop(timeout: Double) -> T? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while items.isEmpty {
            if !condition.wait(until: deadline) { return nil }
        }
        return items.removeFirst()
    }
}
