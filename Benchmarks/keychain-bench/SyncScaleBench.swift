import AsyncHTTPClient
import Dispatch
import Foundation
import HummingbirdWSClient
import KeychainModel
import KeychainSystem
import Logging
import NIOCore
import NIOHTTP1
import SyncProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `keychain-bench --sync-scale --postgres URL` (scripts/bench-sync-scale; issue 33): two
/// trousseau-syncd instances on one PostgreSQL database, 10,000 devices of 3,333 accounts (three
/// each, a fourth in the first) holding a `/v1/notify` WebSocket each — a device on the
/// instance its index names, so an account's devices are split across the two and every hint
/// crosses PostgreSQL's NOTIFY — and a write rate ramped until the p99 of change-to-notification
/// (a batch of one write sent by an account's first device, until the hint of its feed position
/// reaches each of the account's other devices) exceeds one second.
///
/// Reported: connections held, the servers' memory per connection (resident set before and
/// after the sockets, over the sockets each holds), and per step the writes per second done,
/// hints expected and received, and the p50 and p99; floors from the same run: an HTTP round
/// trip to an instance (a 404 that touches no database), and one write's hint at idle, before
/// the sockets open.
struct SyncScaleBench {
    struct Plan: Sendable {
        var devices: Int
        var rates: [Int]
        var step: Double
        var idleSamples: Int

        static let full = Plan(devices: 10_000, rates: [25, 50, 100, 200, 400, 800, 1_600, 3_200, 6_400], step: 5, idleSamples: 200)
        static let smoke = Plan(devices: 30, rates: [10, 20], step: 1, idleSamples: 5)
    }

    /// One step of the ramp.
    struct Step: Codable, Sendable {
        var rate: Int
        var attempted: Int
        var completed: Int
        var failed: Int
        var writesPerSecond: Double
        var hintsExpected: Int
        var hintsReceived: Int
        var p50Micros: Double
        var p99Micros: Double
    }

    struct Report: Codable, Sendable {
        var devices: Int
        var accounts: Int
        var instances: Int
        var connectionsHeld: Int
        var secondsToOpen: Double
        var serverResidentBefore: [Int]
        var serverResidentAfter: [Int]
        var bytesPerConnection: Double
        var floorRoundTripMicros: Double
        var floorIdleHintP50Micros: Double
        var floorIdleHintP99Micros: Double
        var steps: [Step]
        /// The highest rate whose p99 stayed within a second, if any.
        var sustainedRate: Int?
    }

    let plan: Plan
    let postgres: String
    let output: Output

    func run() throws -> Report {
        let syncd = ProcessExecutable.sibling("trousseau-syncd")
        guard access(syncd, X_OK) == 0 else {
            throw BenchError("\(syncd) is missing: run `swift build -c release --product trousseau-syncd` first")
        }
        let servers = try (0..<2).map { _ in try SyncServerProcess(syncd, ["--postgres", postgres, "--open-registration"]) }
        defer { for server in servers { server.stop() } }
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { try? blocking { try await http.shutdown() } }
        let ports = servers.map { $0.port }
        let accounts = plan.devices / 3
        let devices = (0..<plan.devices).map { ScaleDevice(index: $0, accounts: accounts) }
        output.line("--sync-scale: \(plan.devices) devices of \(accounts) accounts, trousseau-syncd on ports \(ports.map(String.init).joined(separator: " and ")), one PostgreSQL")

        // Accounts (each with its first device), then the other devices, 64 requests at a time.
        let registered = Date()
        for pass in [devices.filter(\.isFirst), devices.filter { !$0.isFirst }] {
          try blocking {
            try await Self.forEach(pass, concurrently: 64) { device in
                let path = device.isFirst ? "/v1/accounts" : "/v1/devices"
                let body: any Encodable =
                    device.isFirst
                    ? RegisterAccountRequest(account: device.account, device: device.id, token: device.token)
                    : RegisterDeviceRequest(device: device.id, token: device.token)
                let status = try await Self.send(http, port: ports[0], "POST", path, token: device.isFirst ? nil : devices[device.first].token, body: body).status
                guard status == 201 else { throw BenchError("registering device \(device.index): HTTP \(status)") }
            }
          }
        }
        output.line("registered in \(String(format: "%.1f", Date().timeIntervalSince(registered))) s")

        // Floors: an HTTP round trip, and one write's hint at idle (one account's sockets only).
        let roundTrip = try Latencies.measure(plan.idleSamples) { _ in
            _ = try blocking { try await Self.send(http, port: ports[0], "GET", "/v1/bench-floor") }
        }
        let hints = HintLog()
        let idle = try measureIdle(devices: Array(devices[0..<3]), ports: ports, http: http, hints: hints)
        output.line(
            "floors: HTTP round trip p50 \(Self.ms(roundTrip.p50)); one write's hint at idle (no other socket) p50 \(Self.ms(idle.p50)), p99 \(Self.ms(idle.p99))")

        // Every device's socket.
        let before = servers.map { Self.residentBytes($0.pid) }
        let opened = Date()
        let sockets = ScaleSockets(hints: hints)
        try sockets.open(devices, ports: ports, output: output)
        let secondsToOpen = Date().timeIntervalSince(opened)
        Thread.sleep(forTimeInterval: 1)
        let after = servers.map { Self.residentBytes($0.pid) }
        let held = sockets.subscribed
        let perConnection = Double(zip(after, before).map { $0 - $1 }.reduce(0, +)) / Double(max(held, 1))
        output.line(
            "\(held) sockets held, opened in \(String(format: "%.1f", secondsToOpen)) s; servers' resident memory \(before.map { $0 / 1_048_576 }) → \(after.map { $0 / 1_048_576 }) MiB: \(Int(perConnection)) bytes per connection")

        // The ramp.
        var steps: [Step] = []
        var written = Int64(0)
        for rate in plan.rates {
            let step = try ramp(rate: rate, devices: devices, accounts: accounts, ports: ports, http: http, hints: hints, written: &written)
            steps.append(step)
            output.line(
                "rate \(rate)/s: \(step.completed) writes (\(String(format: "%.0f", step.writesPerSecond))/s), \(step.failed) failed, hints \(step.hintsReceived)/\(step.hintsExpected), p50 \(Self.ms(step.p50Micros)), p99 \(Self.ms(step.p99Micros))")
            if step.p99Micros > 1_000_000 || step.hintsReceived < step.hintsExpected || step.failed > 0 { break }
        }
        let stillHeld = sockets.open
        sockets.close()
        let sustained = steps.filter { $0.p99Micros <= 1_000_000 && $0.hintsReceived == $0.hintsExpected && $0.failed == 0 }.map(\.rate).max()
        output.line("sustained: \(sustained.map { "\($0) writes/s with p99 within 1 s" } ?? "no rate") (\(min(held, stillHeld)) sockets still held at the end)")
        return Report(
            devices: plan.devices, accounts: accounts, instances: 2, connectionsHeld: min(held, stillHeld), secondsToOpen: secondsToOpen,
            serverResidentBefore: before, serverResidentAfter: after, bytesPerConnection: perConnection, floorRoundTripMicros: roundTrip.p50,
            floorIdleHintP50Micros: idle.p50, floorIdleHintP99Micros: idle.p99, steps: steps, sustainedRate: sustained)
    }

    /// One account's three devices alone: each write's hint on the other two.
    func measureIdle(devices: [ScaleDevice], ports: [Int], http: HTTPClient, hints: HintLog) throws -> Latencies {
        let sockets = ScaleSockets(hints: hints)
        try sockets.open(devices, ports: ports, output: nil)
        defer { sockets.close() }
        var samples: [UInt64] = []
        let started = monotonicNanoseconds()
        for index in 0..<plan.idleSamples {
            let sent = monotonicNanoseconds()
            let seq = try blocking { try await Self.write(http, port: ports[0], device: devices[0], record: "idle-\(index)") }
            for receiver in devices.dropFirst() {
                guard let at = hints.wait(device: receiver.index, seq: seq, timeout: 10) else { throw BenchError("no hint at idle within 10 s") }
                samples.append(at > sent ? at - sent : 0)
            }
        }
        return Latencies(samples, elapsedNanoseconds: monotonicNanoseconds() - started)
    }

    /// Writes at `rate` per second for the step's length, each by a random account's first
    /// device through the instance its index names; then waits up to two seconds for the last
    /// hints. Each (write, other device of its account) is one sample.
    func ramp(rate: Int, devices: [ScaleDevice], accounts: Int, ports: [Int], http: HTTPClient, hints: HintLog, written: inout Int64) throws -> Step {
        let count = Int(Double(rate) * plan.step)
        let interval = 1_000_000_000 / UInt64(rate)
        let first = written
        written += Int64(count)
        let results = BlockingMutex([(writer: Int, sent: UInt64, seq: Int64?)]())
        let started = monotonicNanoseconds()
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    let due = started + UInt64(index) * interval
                    let now = monotonicNanoseconds()
                    if due > now { try await Task.sleep(nanoseconds: due - now) }
                    let writer = devices[Int.random(in: 0..<accounts) * 3]
                    group.addTask {
                        let sent = monotonicNanoseconds()
                        let seq = try? await Self.write(http, port: ports[writer.index % ports.count], device: writer, record: "w\(first + Int64(index))")
                        results.withLock { $0.append((writer.index, sent, seq)) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        let done = results.withLock { $0 }
        var samples: [UInt64] = []
        var expected = 0
        var received = 0
        let deadline = Date(timeIntervalSinceNow: 2)
        for result in done {
            guard let seq = result.seq else { continue }
            let writer = devices[result.writer]
            for receiver in writer.accountDevices(total: devices.count) where receiver != writer.index {
                expected += 1
                guard let at = hints.wait(device: receiver, seq: seq, timeout: max(0, deadline.timeIntervalSinceNow)) else {
                    samples.append(UInt64.max / 2)  // never: counts past every bound
                    continue
                }
                received += 1
                samples.append(at > result.sent ? at - result.sent : 0)
            }
        }
        let latencies = Latencies(samples, elapsedNanoseconds: UInt64(elapsed * 1e9))
        let completed = done.filter { $0.seq != nil }.count
        return Step(
            rate: rate, attempted: count, completed: completed, failed: count - completed, writesPerSecond: Double(completed) / elapsed,
            hintsExpected: expected, hintsReceived: received, p50Micros: latencies.p50, p99Micros: latencies.p99)
    }

    // MARK: HTTP

    static func send(_ http: HTTPClient, port: Int, _ method: String, _ path: String, token: Data? = nil, body: (any Encodable)? = nil) async throws
        -> (status: Int, body: ByteBuffer)
    {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
        request.method = HTTPMethod(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer " + token.base64EncodedString()) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), try await response.body.collect(upTo: 1 << 20))
    }

    /// A batch of one write (a new record, version 1) by `device`: its feed position.
    static func write(_ http: HTTPClient, port: Int, device: ScaleDevice, record: String) async throws -> Int64 {
        let writes = [SyncRecord(record: SyncIdentifier(record)!, type: 1, version: 1, body: Data(repeating: 0x5c, count: 256))]
        let answer = try await send(http, port: port, "POST", "/v1/zones/scale/batch", token: device.token, body: BatchRequest(writes: writes))
        guard answer.status == 200, let seq = try JSONDecoder().decode(BatchResponse.self, from: Data(buffer: answer.body)).seqs.first else {
            throw BenchError("a batch got HTTP \(answer.status)")
        }
        return seq
    }

    /// Runs `body` over `items`, at most `width` at a time.
    static func forEach<T: Sendable>(_ items: [T], concurrently width: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, item) in items.enumerated() {
                if index >= width { try await group.next() }
                group.addTask { try await body(item) }
            }
            try await group.waitForAll()
        }
    }

    /// A process's resident set, in bytes (`VmRSS`).
    static func residentBytes(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib * 1024
    }

    static func ms(_ micros: Double) -> String { micros > 1e12 ? "never" : String(format: "%.1f ms", micros / 1000) }
}

/// A simulated device: its account (device `index / 3`; the last few share the last account),
/// id and credential.
struct ScaleDevice: Sendable {
    let index: Int
    let accountIndex: Int
    let account: SyncIdentifier
    let id: SyncIdentifier
    let token: Data

    init(index: Int, accounts: Int) {
        self.index = index
        accountIndex = min(index / 3, accounts - 1)
        account = SyncIdentifier("scale-account-\(accountIndex)")!
        id = SyncIdentifier("scale-device-\(index)")!
        var token = Data(count: 32)
        withUnsafeBytes(of: UInt64(index).bigEndian) { token.replaceSubrange(0..<8, with: $0) }
        token[31] = 0x5a
        self.token = token
    }

    /// The account's first device (which opened it).
    var first: Int { accountIndex * 3 }
    var isFirst: Bool { index == first }

    /// Every device of this device's account.
    func accountDevices(total: Int) -> [Int] {
        let end = accountIndex == (total / 3) - 1 ? total : first + 3
        return Array(first..<end)
    }
}

/// When each device received the hint of each feed position (monotonic nanoseconds).
final class HintLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var received: [Int: [Int64: UInt64]] = [:]

    func record(device: Int, seq: Int64, at time: UInt64) {
        condition.lock()
        received[device, default: [:]][seq] = time
        condition.broadcast()
        condition.unlock()
    }

    func wait(device: Int, seq: Int64, timeout: Double) -> UInt64? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let time = received[device]?[seq] { return time }
            if !condition.wait(until: deadline) { return received[device]?[seq] }
        }
    }
}

/// Every device's `/v1/notify` socket, each a task on NIO's shared event loops.
final class ScaleSockets: @unchecked Sendable {
    let hints: HintLog
    private let state = BlockingMutex((subscribed: 0, open: 0))
    private let closing = BlockingMutex([AsyncStream<Void>.Continuation]())
    private var tasks: [Task<Void, Never>] = []

    init(hints: HintLog) { self.hints = hints }

    var subscribed: Int { state.withLock { $0.subscribed } }
    var open: Int { state.withLock { $0.open } }

    /// Opens a socket per device (device `i` to instance `i % ports.count`), 500 at a time,
    /// each waiting for its `subscribed`.
    func open(_ devices: [ScaleDevice], ports: [Int], output: Output?) throws {
        for start in stride(from: 0, to: devices.count, by: 500) {
            let batch = devices[start..<min(start + 500, devices.count)]
            let target = subscribed + batch.count
            for device in batch { tasks.append(connect(device, port: ports[device.index % ports.count])) }
            let deadline = Date(timeIntervalSinceNow: 60)
            while subscribed < target {
                guard Date() < deadline else { throw BenchError("only \(subscribed) of \(target) sockets subscribed within 60 s") }
                Thread.sleep(forTimeInterval: 0.01)
            }
            if let output, (start / 500) % 4 == 3 { output.line("  \(subscribed) sockets") }
        }
    }

    private func connect(_ device: ScaleDevice, port: Int) -> Task<Void, Never> {
        let (closeRequests, closing) = AsyncStream.makeStream(of: Void.self)
        self.closing.withLock { $0.append(closing) }
        let (hints, state) = (self.hints, self.state)
        return Task {
            var logger = Logger(label: "scale")
            logger.logLevel = .critical
            _ = try? await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/notify",
                configuration: .init(additionalHeaders: [.authorization: "Bearer " + device.token.base64EncodedString()]), logger: logger
            ) { inbound, outbound, _ in
                state.withLock { $0.open += 1 }
                defer { state.withLock { $0.open -= 1 } }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 4096) {
                            let now = monotonicNanoseconds()
                            guard case .text(let text) = message, let hint = try? JSONDecoder().decode(ChangeHint.self, from: Data(text.utf8)) else { continue }
                            if hint == .subscribed {
                                state.withLock { $0.subscribed += 1 }
                            } else if hint.zone != nil {
                                hints.record(device: device.index, seq: hint.seq, at: now)
                            }
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
    }

    func close() {
        for closing in closing.withLock({ $0 }) { closing.yield() }
        let tasks = self.tasks
        _ = try? blocking {
            for task in tasks { await task.value }
        }
    }
}
