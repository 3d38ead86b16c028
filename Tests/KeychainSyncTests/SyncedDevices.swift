import Crypto
import EnclaveBackend
import EnclaveProtocol
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainSync
import KeychainTestSupport
import Logging
import SyncCrypto
import SyncProtocol
import SyncServer

/// Keys every device of the test account holds: a class key for A and one for C, and each
/// device's signing key. In securityd the enclave holds them; here the same envelope format
/// is sealed and opened with them in process (real AES-GCM and Ed25519).
final class SharedSyncKeys: Sendable {
    static let classKeyID = SyncIdentifier("class-c")!
    static let classAKeyID = SyncIdentifier("class-a")!
    let classKey = SymmetricKey(size: .bits256)
    let classAKey = SymmetricKey(size: .bits256)
    let signing: [SyncIdentifier: Curve25519.Signing.PrivateKey]

    init(devices: [SyncIdentifier]) {
        signing = Dictionary(uniqueKeysWithValues: devices.map { ($0, Curve25519.Signing.PrivateKey()) })
    }
}

/// ``SyncRecordEnvelope`` under the shared keys: the enclave's format, in process. As the
/// enclave does, it refuses class A's key while the device's keybag is locked
/// (`errSecInteractionNotAllowed`).
struct SoftwareSealer: SyncRecordSealing {
    let device: SyncIdentifier
    let keys: SharedSyncKeys
    let keybag: SoftwareKeybag

    func seal(_ plaintext: SecretBytes, context: SyncRecordContext, protection: ProtectionClass) throws -> Data {
        guard !protection.isThisDeviceOnly else { throw KeychainError.param("a ThisDeviceOnly item reached the sealer") }
        let classA = protection == .whenUnlocked
        return try SyncRecordEnvelope.seal(
            plaintext, context: context, parent: classA ? (SharedSyncKeys.classAKeyID, try classAKey()) : (SharedSyncKeys.classKeyID, keys.classKey),
            writer: device, signingKey: keys.signing[device]!
        ).encoded
    }

    func open(_ body: Data, context: SyncRecordContext) throws -> SecretBytes {
        let envelope = try SyncRecordEnvelope(decoding: body)
        let classA = envelope.parentKey == SharedSyncKeys.classAKeyID ? try classAKey() : nil
        return try envelope.open(
            context: context, parentKey: { $0 == SharedSyncKeys.classKeyID ? keys.classKey : $0 == SharedSyncKeys.classAKeyID ? classA : nil },
            writerKey: { keys.signing[$0]?.publicKey })
    }

    private func classAKey() throws -> SymmetricKey {
        guard keybag.status().isAvailable(.whenUnlocked) else { throw KeychainError(status: OSStatusCode.interactionNotAllowed) }
        return keys.classAKey
    }
}

/// The server's store called in process, as its routes call it; `offline` cuts the device off.
final class InProcessTransport: SyncZoneTransport, @unchecked Sendable {
    // @unchecked: `offline` is set by the test between sync rounds, never during one.
    let server: SQLSyncStore
    let account: SyncIdentifier
    var offline = false

    init(server: SQLSyncStore, account: SyncIdentifier) {
        self.server = server
        self.account = account
    }

    struct Offline: Error {}

    func apply(_ writes: [SyncRecord], zone: SyncIdentifier) async throws -> [Int64] {
        if offline { throw Offline() }
        return try await server.apply(writes, account: account, zone: zone)
    }

    func changes(zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse {
        if offline { throw Offline() }
        return try await server.changes(account: account, zone: zone, after: after, limit: limit)
    }
}

/// Devices of one account, each a real keychain store (SQLite file, software keybag), syncing
/// through one server store (a real SQLite file) with the engine securityd runs.
final class SyncedDevices: @unchecked Sendable {
    // @unchecked: immutable after init but for the transports' `offline`.
    struct Device {
        let id: SyncIdentifier
        let keychain: TemporaryKeychain
        let transport: InProcessTransport
        let engine: KeychainSyncEngine
        var store: KeychainStore { keychain.store }
    }

    let directory: String
    let server: SQLSyncStore
    let devices: [Device]
    let logs = BlockingMutex<[String]>([])

    static let account = SyncIdentifier("account-1")!
    static let zone = SyncIdentifier("zone-items")!

    init(count: Int) async throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        server = try await SQLSyncStore.sqlite(path: directory + "/server.sqlite", logger: Logger(label: "sync-test"))
        let ids = (0..<count).map { SyncIdentifier("device-\($0)")! }
        try await server.registerAccount(Self.account, device: ids[0], tokenHash: Data(count: 32), quota: .standard)
        let keys = SharedSyncKeys(devices: ids)
        var devices: [Device] = []
        for id in ids {
            let keychain = try TemporaryKeychain()
            try keychain.store.enableSync(SyncAccountRecord(server: "in-process", account: Self.account.rawValue, device: id.rawValue, identity: Data([1])))
            let transport = InProcessTransport(server: server, account: Self.account)
            let logs = self.logs
            let engine = try KeychainSyncEngine(
                store: keychain.store, sealer: SoftwareSealer(device: id, keys: keys, keybag: keychain.keybag), transport: transport, device: id, zone: Self.zone,
                log: { _, line in logs.withLock { $0.append(line) } })
            devices.append(Device(id: id, keychain: keychain, transport: transport, engine: engine))
        }
        self.devices = devices
    }

    let closed = BlockingMutex(false)

    /// Closes the server's database (once); the files stay until ``with(count:_:)`` ends.
    func close() async throws {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        try await server.close()
    }

    /// Runs `body` with `count` devices, and closes the server whatever it throws (an open
    /// SQLite connection asserts when it is freed).
    static func with(count: Int, _ body: (SyncedDevices) async throws -> Void) async throws {
        let devices = try await SyncedDevices(count: count)
        defer { try? FileManagerLite.removeTree(devices.directory) }
        do {
            try await body(devices)
        } catch {
            try? await devices.close()
            throw error
        }
        try await devices.close()
    }

    subscript(index: Int) -> Device { devices[index] }

    /// What every sync round of the test did, added up.
    let totals = BlockingMutex(SyncReport())

    /// One device syncs (and the totals count it).
    func sync(_ index: Int) async throws {
        let report = try await devices[index].engine.sync()
        totals.withLock { totals in
            totals.received += report.received
            totals.refused += report.refused
            totals.sent += report.sent
            totals.conflicts += report.conflicts
            totals.waiting += report.waiting
        }
    }

    /// Every device syncs, in order, until a whole round moves nothing.
    func converge(rounds: Int = 6) async throws {
        for _ in 0..<rounds {
            let before = totals.withLock { $0.received + $0.sent }
            for (index, device) in devices.enumerated() where !device.transport.offline {
                try await sync(index)
            }
            if totals.withLock({ $0.received + $0.sent }) == before { return }
        }
    }

    /// A device's synchronizable items as text, for comparing devices: class, account,
    /// service/server, label, comment, secret; sorted.
    func items(_ index: Int) throws -> [String] {
        let keychain = devices[index].keychain
        var lines: [String] = []
        for itemClass in ["genp", "inet"] {
            let result: KeychainValue?
            do {
                result = try keychain.store.copyMatching(
                    ["class": .string(itemClass), "sync": .bool(true), "r_Attributes": .bool(true), "r_Data": .bool(true), "m_Limit": .string("m_LimitAll")],
                    caller: keychain.caller)
            } catch let error as KeychainError where error == .itemNotFound {
                continue
            }
            for case .dictionary(let item) in result?.array ?? [] {
                let secret = item["v_Data"].flatMap { value -> String? in
                    if case .data(let data) = value { return String(decoding: data, as: UTF8.self) }
                    return nil
                } ?? "-"
                let name = item["svce"]?.stringValue ?? item["srvr"]?.stringValue ?? "-"
                lines.append([itemClass, item["acct"]?.stringValue ?? "-", name, item["labl"]?.stringValue ?? "-", item["icmt"]?.stringValue ?? "-", secret].joined(separator: " | "))
            }
        }
        return lines.sorted()
    }
}
