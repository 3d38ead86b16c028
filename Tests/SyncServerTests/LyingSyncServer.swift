import Crypto
import Foundation
import Hummingbird
import HummingbirdWebSocket
import KeychainModel
import Logging
import SyncProtocol
@testable import SyncServer

/// The device a request to the lying server comes from (its credential's), for lies told to
/// one device and not another.
enum Requester {
    @TaskLocal static var device: SyncIdentifier?
}

/// What the lying store does to its honest answers, as a test sets it (nil: the truth).
struct Lies: Sendable {
    /// Rewrites one page of a zone's feed for the device that asked.
    var changes: (@Sendable (_ device: SyncIdentifier?, _ after: Int64, _ honest: ChangesResponse) -> ChangesResponse)?
    /// Replaces a message a pairing's new device posts (the pairing's id passed along: CPace's
    /// session id, which the server knows).
    var newDeviceMessage: (@Sendable (_ pairing: SyncIdentifier, _ index: Int, _ body: Data) -> Data)?
    /// Rewrites the membership chain's entries for the device that asked (to withhold one).
    var membership: (@Sendable (_ device: SyncIdentifier?, _ honest: [MembershipEntry]) -> [MembershipEntry])?
    /// Takes a revocation and keeps the credential: the removed device is still served.
    var keepRevokedDevices = false
}

/// A server that lies (research §6.3's "EvilStore"): trousseau-syncd's own routes and SQL
/// store, in the test's process on a loopback port, with a store between them that rewrites
/// what the test says. Devices are real securityd processes that reach it over HTTP as they
/// reach trousseau-syncd; everything they write is kept (``written``) for the lies to replay.
final class LyingSyncServer: Sendable {
    let store: LyingSyncStore
    let port: Int
    private let task: Task<Void, any Error>

    var url: String { "http://127.0.0.1:\(port)" }

    private init(store: LyingSyncStore, port: Int, task: Task<Void, any Error>) {
        self.store = store
        self.port = port
        self.task = task
    }

    static func start(_ backend: Backend = .sqlite) async throws -> LyingSyncServer {
        let store = LyingSyncStore(try await backend.open(try backend.makeLocation()), backend: backend)
        let routes = SyncRoutes(store: store, openRegistration: true)
        let router = routes.router().buildResponder()
        let responder = CallbackResponder<SyncRequestContext> { request, context in
            let device = await store.requester(request)
            return try await Requester.$device.withValue(device) { try await router.respond(to: request, context: context) }
        }
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "lying-syncd")
        logger.logLevel = .critical  // a cancelled run logs its channels' cancellation as errors
        let app = Application(
            responder: responder,
            server: .http1WebSocketUpgrade(webSocketRouter: routes.webSocketRouter(), configuration: .init(ws: .init(maxFrameSize: 4096))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? 0)
                announce.finish()
            },
            logger: logger)
        let task = Task { try await app.runService() }
        var port = 0
        for await announced in ports { port = announced }
        guard port > 0 else {
            task.cancel()
            throw SyncTestError(description: "the lying server did not start")
        }
        return LyingSyncServer(store: store, port: port, task: task)
    }

    func stop() async {
        task.cancel()
        _ = try? await task.value
        try? await store.close()
    }

    /// Sends one request to the server as a client would (`authorization` as it is).
    func send(_ method: String, _ path: String, authorization: String?, json: Data? = nil) async throws -> (status: Int, body: Data) {
        try await loopbackRequest(port: port, method, path, authorization: authorization, json: json)
    }

    /// Tells the truth again: one history for every device, the one it kept before any fork.
    func behave() {
        store.lies.withLock { $0 = Lies() }
        store.branch.withLock { $0?.devices = [] }  // the copy is closed with the store
    }
}

/// The real store, with lies told on the way out (``Lies``) and every write kept; it can
/// fork (``fork(for:)``): from then on some devices read and write a copy of its past.
final class LyingSyncStore: SyncStore {
    let inner: SQLSyncStore
    let backend: Backend
    let lies = BlockingMutex(Lies())
    /// The other branch of a fork, and the devices that see it.
    let branch = BlockingMutex<(store: SQLSyncStore, devices: Set<SyncIdentifier>)?>(nil)
    /// Every change the store took, in order, to copy its past into a branch.
    private let past = BlockingMutex([@Sendable (SQLSyncStore) async throws -> Void]())
    /// Every record written, by account, in the order the server took them (with their feed positions).
    let written = BlockingMutex([SyncIdentifier: [SyncRecord]]())
    /// The last `Authorization` header each device sent (a thief's copy of its credential).
    let credentials = BlockingMutex([SyncIdentifier: String]())
    private let pairingIDs = BlockingMutex([Int64: SyncIdentifier]())
    private let newDeviceMessages = BlockingMutex([Int64: Int]())

    init(_ inner: SQLSyncStore, backend: Backend) {
        self.inner = inner
        self.backend = backend
    }

    /// Forks the store: `devices` go on with a copy of everything so far (the same records
    /// at the same feed positions, the same chain), the others with the original.
    func fork(for devices: Set<SyncIdentifier>) async throws {
        let copy = try await backend.open(try backend.makeLocation())
        for change in past.withLock({ $0 }) { try await change(copy) }
        branch.withLock { $0 = (copy, devices) }
    }

    /// The store the requesting device sees.
    var seen: SQLSyncStore {
        branch.withLock { branch in
            guard let branch, let device = Requester.device, branch.devices.contains(device) else { return inner }
            return branch.store
        }
    }

    private func remember(_ change: @escaping @Sendable (SQLSyncStore) async throws -> Void) { past.withLock { $0.append(change) } }

    /// The device whose bearer credential a request carries, if it is one.
    func requester(_ request: Request) async -> SyncIdentifier? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let token = Data(base64Encoded: String(header.dropFirst("Bearer ".count)))
        else { return nil }
        let device = try? await inner.device(tokenHash: Data(SHA256.hash(data: token)))?.device
        if let device { credentials.withLock { $0[device] = header } }
        return device
    }

    /// The records `account` wrote, each at every version (the honest history a lie replays).
    func history(of account: SyncIdentifier) -> [SyncRecord] { written.withLock { $0[account] ?? [] } }

    func registerAccount(_ account: SyncIdentifier, device: SyncIdentifier, tokenHash: Data, quota: SyncQuota) async throws {
        try await inner.registerAccount(account, device: device, tokenHash: tokenHash, quota: quota)
        remember { try await $0.registerAccount(account, device: device, tokenHash: tokenHash, quota: quota) }
    }

    func registerDevice(_ device: SyncIdentifier, account: SyncIdentifier, tokenHash: Data) async throws {
        try await inner.registerDevice(device, account: account, tokenHash: tokenHash)
        remember { try await $0.registerDevice(device, account: account, tokenHash: tokenHash) }
    }

    func revokeDevice(_ device: SyncIdentifier, account: SyncIdentifier) async throws {
        if lies.withLock({ $0.keepRevokedDevices }) { return }
        try await inner.revokeDevice(device, account: account)
        remember { try await $0.revokeDevice(device, account: account) }
    }

    func device(tokenHash: Data) async throws -> AuthenticatedDevice? { try await inner.device(tokenHash: tokenHash) }

    func apply(_ writes: [SyncRecord], account: SyncIdentifier, zone: SyncIdentifier) async throws -> [Int64] {
        let store = seen
        let positions = try await store.apply(writes, account: account, zone: zone)
        if store === inner { remember { _ = try await $0.apply(writes, account: account, zone: zone) } }
        written.withLock { all in
            for (write, seq) in zip(writes, positions) {
                var kept = write
                kept.seq = seq
                all[account, default: []].append(kept)
            }
        }
        return positions
    }

    func changes(account: SyncIdentifier, zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse {
        let honest = try await seen.changes(account: account, zone: zone, after: after, limit: limit)
        guard let lie = lies.withLock({ $0.changes }) else { return honest }
        return lie(Requester.device, after, honest)
    }

    func appendMembership(_ entry: MembershipEntry, account: SyncIdentifier) async throws {
        let store = seen
        try await store.appendMembership(entry, account: account)
        if store === inner { remember { try await $0.appendMembership(entry, account: account) } }
    }

    func membership(account: SyncIdentifier, after: Int64, limit: Int) async throws -> MembershipResponse {
        let honest = try await seen.membership(account: account, after: after, limit: limit)
        guard let lie = lies.withLock({ $0.membership }) else { return honest }
        // The lie rewrites each page (the tests' chains fit in one).
        return MembershipResponse(entries: lie(Requester.device, honest.entries), more: honest.more)
    }

    func openPairing(account: SyncIdentifier, device: SyncIdentifier, pairing: SyncIdentifier, now: Int64) async throws -> PairingOpened {
        let opened = try await inner.openPairing(account: account, device: device, pairing: pairing, now: now)
        pairingIDs.withLock { $0[opened.nameplate] = pairing }
        return opened
    }

    func claimPairing(nameplate: Int64, tokenHash: Data, now: Int64) async throws -> PairingClaimed {
        try await inner.claimPairing(nameplate: nameplate, tokenHash: tokenHash, now: now)
    }

    func postPairingMessage(nameplate: Int64, party: PairingParty, body: Data, now: Int64) async throws -> Int64 {
        var body = body
        if case .newDevice = party, let lie = lies.withLock({ $0.newDeviceMessage }), let pairing = pairingIDs.withLock({ $0[nameplate] }) {
            let index = newDeviceMessages.withLock { counts in
                defer { counts[nameplate, default: 0] += 1 }
                return counts[nameplate, default: 0]
            }
            body = lie(pairing, index, body)
        }
        return try await inner.postPairingMessage(nameplate: nameplate, party: party, body: body, now: now)
    }

    func pairingMessages(nameplate: Int64, party: PairingParty, after: Int64, now: Int64) async throws -> PairingMessages {
        try await inner.pairingMessages(nameplate: nameplate, party: party, after: after, now: now)
    }

    func closePairing(nameplate: Int64, party: PairingParty, now: Int64) async throws {
        try await inner.closePairing(nameplate: nameplate, party: party, now: now)
    }

    var hints: ChangeHints { inner.hints }

    func close() async throws {
        try await branch.withLock({ $0?.store })?.close()
        try await inner.close()
    }
}
