import Crypto
import EnclaveBackend
import Foundation
import KeychainCallers
import KeychainModel
import KeychainStore
import KeychainSync
import SyncCrypto
import SyncNetwork
import SyncProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine's rows of `keychain-bench --sync`: N synchronizable items sent by one device
/// (the queue drained in batches of 100), then received whole by a new device — each a
/// keychain store on a SQLite file in `--directory`, running the engine securityd will run,
/// over HTTP to the trousseau-syncd being measured. Records are sealed and opened in
/// process (SyncRecordEnvelope, the enclave's format and crypto); the enclave's own cost
/// per record is its seal and open rows, to add.
struct SyncEngineBench {
    let items: Int
    let directory: String
    let port: Int
    let writerToken: Data
    let readerToken: Data

    /// The two rows for `backend`, against the floor of the same work's HTTP round trips
    /// and the local store's durable commits (one per record received).
    func measure(backend: String, roundTrip: Latencies, commit: Latencies) throws -> [BenchReport.SyncRow] {
        let keys = EngineBenchKeys()
        let zone = SyncIdentifier("engine-\(getpid())")!
        let writer = try device("writer", token: writerToken, keys: keys, zone: zone)
        let reader = try device("reader", token: readerToken, keys: keys, zone: zone)
        defer {
            try? FileManager.default.removeItem(atPath: writer.home)
            try? FileManager.default.removeItem(atPath: reader.home)
        }
        let caller = AccessGroups.securityToolView  // items go to the tool's group, which syncs
        for index in 0..<items {
            _ = try writer.store.add(
                [
                    "class": .string("genp"), "acct": .string("account \(index)"), "svce": .string("bench.example"), "sync": .bool(true),
                    "labl": .string("Bench item \(index)"), "v_Data": .data(Data("secret \(index)".utf8)),
                ], caller: caller)
        }

        let sendStart = monotonicNanoseconds()
        let sent = try blocking { try await writer.engine.sync() }
        let sendNanoseconds = monotonicNanoseconds() - sendStart
        guard sent.sent == items else { throw BenchError("the writer sent \(sent.sent) of \(items) items") }

        let receiveStart = monotonicNanoseconds()
        let received = try blocking { try await reader.engine.sync() }
        let receiveNanoseconds = monotonicNanoseconds() - receiveStart
        guard received.received == items, received.refused == 0 else { throw BenchError("the new device took \(received.received) of \(items) items") }
        let found = try reader.store.copyMatching(["class": .string("genp"), "sync": .bool(true), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")], caller: caller)
        guard case .array(let held)? = found, held.count == items else { throw BenchError("the new device does not hold the \(items) items") }

        // The writer reads its writes back and sends its signed head; the reader's next round
        // reads it and compares it with its own view of every record.
        let published = try blocking { try await writer.engine.sync() }
        guard published.headsSent == 1 else { throw BenchError("the writer sent \(published.headsSent) heads") }
        let compareStart = monotonicNanoseconds()
        let compared = try blocking { try await reader.engine.sync() }
        let compareNanoseconds = monotonicNanoseconds() - compareStart
        guard compared.headsAgreed == 1 else { throw BenchError("the reader compared \(compared.headsAgreed) heads") }
        // Its floor: one HTTP round trip and SHA-256 over the view as a root covers it (id,
        // version and body hash per record).
        let view = Data(count: items * (4 + 36 + 8 + 32))
        let hashStart = monotonicNanoseconds()
        _ = SHA256.hash(data: view)
        let hashMicros = Double(monotonicNanoseconds() - hashStart) / 1000

        let batches = (items + SyncLimits.batchWrites - 1) / SyncLimits.batchWrites
        let pages = (items + SyncLimits.changesPage - 1) / SyncLimits.changesPage
        func row(_ operation: String, nanoseconds: UInt64, floorMicros: Double, floor: String, operations: Int? = nil) -> BenchReport.SyncRow {
            let micros = Double(nanoseconds) / 1000
            return BenchReport.SyncRow(
                backend: backend, operation: operation, clients: 1, samples: 1, opsPerSecond: Double(operations ?? items) / (micros / 1_000_000),
                p50Micros: micros, p99Micros: micros, floor: floor, floorMicros: floorMicros, ratio: micros / floorMicros)
        }
        return [
            row(
                "engine: \(items) queued items sent (all of them, µs)", nanoseconds: sendNanoseconds,
                floorMicros: Double(batches) * roundTrip.p50 + Double(batches) * commit.p50, floor: "\(batches) HTTP round trips + \(batches) server commits"),
            row(
                "engine: initial sync of \(items) items to a new device (all of them, µs)", nanoseconds: receiveNanoseconds,
                floorMicros: Double(pages + 1) * roundTrip.p50 + Double(items) * commit.p50, floor: "\(pages + 1) HTTP round trips + \(items) local commits"),
            row(
                "engine: a member's signed head compared with a view of \(items) records (one round, µs)", nanoseconds: compareNanoseconds,
                floorMicros: roundTrip.p50 + hashMicros, floor: "1 HTTP round trip + SHA-256 over the view", operations: 1),
        ]
    }

    struct Device {
        let home: String
        let store: KeychainStore
        let engine: KeychainSyncEngine
    }

    func device(_ name: String, token: Data, keys: EngineBenchKeys, zone: SyncIdentifier) throws -> Device {
        let home = directory + "/bench-engine-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let store = try KeychainStore(directory: home, keybag: SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home)))
        let id = SyncIdentifier(name)!
        try store.enableSync(SyncAccountRecord(server: "http://127.0.0.1:\(port)", account: "bench", device: name, identity: Data([1])))
        // Both devices hold the same chain (its head's hash is all a head compares of it), so
        // they write and compare signed heads as securityd's engine does.
        let engine = try KeychainSyncEngine(
            store: store, sealer: EngineBenchSealer(device: id, keys: keys), transport: SyncServerClient(server: "http://127.0.0.1:\(port)", credential: SecretBytes(token), http: AsyncHTTPExchange()), device: id, zone: zone,
            chain: [Data(repeating: 1, count: 32)])
        return Device(home: home, store: store, engine: engine)
    }
}

/// One class key and each device's signing key, held in process for the bench.
final class EngineBenchKeys: Sendable {
    static let classKeyID = SyncIdentifier("class-c")!
    let classKey = SymmetricKey(size: .bits256)
    let signing: [SyncIdentifier: Curve25519.Signing.PrivateKey] = [
        SyncIdentifier("writer")!: Curve25519.Signing.PrivateKey(), SyncIdentifier("reader")!: Curve25519.Signing.PrivateKey(),
    ]
}

/// Records sealed and opened in process with the bench's keys (the enclave's format).
struct EngineBenchSealer: SyncRecordSealing {
    let device: SyncIdentifier
    let keys: EngineBenchKeys

    func seal(_ plaintext: SecretBytes, context: SyncRecordContext, protection: ProtectionClass) throws -> Data {
        try SyncRecordEnvelope.seal(
            plaintext, context: context, parent: (EngineBenchKeys.classKeyID, keys.classKey), writer: device, signingKey: keys.signing[device]!
        ).encoded
    }

    func open(_ body: Data, context: SyncRecordContext) throws -> SecretBytes {
        try SyncRecordEnvelope(decoding: body).open(
            context: context, parentKey: { $0 == EngineBenchKeys.classKeyID ? keys.classKey : nil }, writerKey: { keys.signing[$0]?.publicKey })
    }
}
