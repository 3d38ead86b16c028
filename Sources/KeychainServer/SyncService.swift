import Dispatch
import Enclave
import EnclaveProtocol
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainProtocol
import KeychainStore
import KeychainSync
import KeychainSystem
import SyncCrypto
import SyncEngine
import SyncProtocol
import SyncTransport

#if canImport(Glibc)
import Glibc
#endif

/// securityd's side of sync for its keychain: founds a circle (``enable(server:)``), runs
/// rounds of the engine (``syncNow()``, and every ``interval`` in the background while the
/// daemon runs), reports where it stands. One round at a time; each reads the account, the
/// circle and the keys afresh from the store, so a round never acts on a disabled account.
final class SyncService: Sendable {
    let store: KeychainStore
    let enclave: EnclaveClient
    /// False for the System keychain's daemon: what syncs is a user's.
    let enabledHere: Bool

    struct State {
        var lastSync: Date?
        var lastError: String?
        /// Records the server sent that this device refused, since securityd started, and the
        /// last one's time and reason (``KeychainSyncEngine``: it reads them again next round).
        var refused = 0
        /// Record versions the server's feed left out (seen in a refused batch), since start.
        var omitted = 0
        var lastRefusal: (at: Date, reason: String)?
        /// The highest feed position the server gave one of this device's writes that its
        /// feed has not yet given back, and since when: a server that takes writes and then
        /// serves nothing past them is withholding updates (a stall).
        var unreached: (position: Int64, since: Date)?
        /// How long a feed may stay short of this device's own write before `status` warns.
        var stallAfter: TimeInterval = 3600
        /// Pairings this device opened, by nameplate.
        var pairings: [Int64: PairingSession] = [:]
        /// Whether rounds run by themselves (``startBackground(interval:)``), not only when asked.
        var background = false
        /// The first device-list entry the server gave that did not verify, why, and how many
        /// were passed over with it (the last refresh's; nil when all verified).
        var unverified: (index: Int64, reason: String, count: Int)?
    }
    let state = BlockingMutex(State())
    /// Held for a whole round (or an enable, or a disable): one at a time.
    let rounds = BlockingMutex(())
    /// Signalled when a round should run before the timer's: a local change was queued, or
    /// the server hinted at another device's. Kicks that come during a round run one more
    /// round after it, so a burst of changes costs a round or two, not one each.
    let wakeups = DispatchSemaphore(value: 0)
    /// The process that speaks to the server: every request, and the change hints while
    /// sync is on (``startHints()``). It starts at the first request.
    let agent: SyncAgentClient

    /// The zone every item record lives in (one view, as CKKS's "keychain" zone).
    static let zone = SyncIdentifier("keychain")!

    init(store: KeychainStore, enclave: EnclaveClient, enabledHere: Bool, agent: SyncAgentClient = SyncAgentClient(log: { DaemonLog.logger.warning("\($0)") })) {
        self.store = store
        self.enclave = enclave
        self.enabledHere = enabledHere
        self.agent = agent
    }

    // MARK: Enable and disable

    /// Founds a circle on `server`: this device's identity, the chain's genesis, the zone's
    /// keys (the class keys uploaded under the zone key, for devices that join), the account
    /// on the server; then sync is on and the first round sends every item that may sync.
    func enable(server: String) throws -> SyncStatusReport {
        guard enabledHere else { throw KeychainError(status: OSStatusCode.unimplemented, message: "the System keychain does not sync") }
        let url = try SyncServerClient.checkedURL(server)
        try rounds.withLock { _ in
            guard try store.syncAccount() == nil else {
                throw Self.alreadyOn
            }
            let account = SyncIdentifier.random()
            let device = SyncIdentifier.random()
            let zone = Self.zone
            let identity = try enclave.createSyncIdentity(device: device)
            let genesis = try enclave.signMembershipRecord(
                MembershipRecord.unsigned(
                    account: account, index: 0, previous: MembershipRecord.genesisPrevious, operation: .genesis(identity.publicKeys), signer: device),
                as: identity)
            _ = try Self.membership([genesis.encoded])
            let zoneKey = try enclave.createSyncKey(role: .zone)
            let classKeys = [try enclave.createSyncKey(role: .classA), try enclave.createSyncKey(role: .classC)]
            let keyRecords = try classKeys.map { key in
                let context = SyncRecordContext(zone: zone, record: key.keyID, version: 1, type: .classKey)
                return SyncRecord(
                    record: key.keyID, type: SyncRecordType.classKey.rawValue, version: 1,
                    body: try enclave.sealSyncKey(key, context: context, parent: zoneKey, identity: identity))
            }
            let client = try SyncServerClient(server: url.absoluteString, credential: try enclave.syncCredential(identity: identity), http: agent)
            try Self.blocking {
                try await client.registerAccount(account, device: device)
                try await client.appendMembership(MembershipEntry(index: 0, entry: genesis.encoded))
                _ = try await client.apply(keyRecords, zone: zone)
            }
            let rows = ([zoneKey] + classKeys).map { SyncKeyRow(key: $0.keyID.rawValue, zone: zone.rawValue, role: Int($0.role.rawValue), blob: $0.data) }
            try store.enableSync(
                SyncAccountRecord(server: url.absoluteString, account: account.rawValue, device: device.rawValue, identity: identity.data),
                circle: SyncCircleRows(
                    membership: [genesis.encoded], keys: rows,
                    zone: SyncZoneKeys(zone: zone.rawValue, zoneKey: zoneKey.keyID.rawValue, classA: classKeys[0].keyID.rawValue, classC: classKeys[1].keyID.rawValue)))
            DaemonLog.logger.notice("sync: founded a circle on \(url.host ?? "the server") as device \(device)")
        }
        _ = try? syncNow()
        startHints()
        return try status()
    }

    /// Turns sync off: revokes this device's credential on the server (when it can be reached),
    /// then forgets the account and its state; every item stays. It does not remove itself from
    /// the circle's device list: a removal changes the zone's keys, which a device leaving
    /// should not be the one to make and keep; another member's `remove-device` does that
    /// (docs/SECURITY.md, "Turning sync off").
    func disable() throws {
        try rounds.withLock { _ in
            guard try store.syncAccount() != nil else { throw Self.off }
            if let circle = try? circle() {
                do {
                    try revoke(circle.device, circle.client)
                    DaemonLog.logger.notice("sync: this device's credential is revoked")
                } catch {
                    DaemonLog.logger.notice("sync: turning off without revoking this device's credential (\(error)): the server keeps it until another member removes the device")
                }
            }
            try store.disableSync()
            stopHints()
            state.withLock {
                $0.lastSync = nil
                $0.lastError = nil
                $0.refused = 0
                $0.omitted = 0
                $0.lastRefusal = nil
                $0.unreached = nil
                $0.unverified = nil
                $0.pairings = [:]
            }
            DaemonLog.logger.notice("sync: turned off")
        }
    }

    // MARK: Rounds

    /// One round now: pull, merge, send — and this device's signed head, when `publishingHead`
    /// (`security sync now` and the timer's rounds; a round a change or a hint started leaves
    /// it to the next of those: heads detect a lying server, they need not be immediate, and
    /// one on every change would double every change's traffic between the devices).
    ///
    /// - Throws: `errSecItemNotFound` when sync is off; the server's or the network's failure
    ///   (also kept for ``status()``).
    @discardableResult
    func syncNow(publishingHead: Bool = true) throws -> SyncReport {
        try rounds.withLock { _ in try round(publishingHead: publishingHead) }
    }

    /// One round, with ``rounds`` held by the caller (a removal, an approval, a recovery key:
    /// each reads what the server has before it changes the circle).
    @discardableResult
    func round(publishingHead: Bool) throws -> SyncReport {
        guard var circle = try circle() else { throw Self.off }
        do {
            circle = try refreshMembership(circle)
            let chain = try store.syncMembership().map { try MembershipRecord(decoding: $0).hash }
            let engine = try KeychainSyncEngine(
                store: store, sealer: circle.sealer, transport: circle.client, device: circle.device, zone: circle.zone,
                log: { DaemonLog.logger.log(level: $0, "\($1)") }, chain: chain, removed: Set(circle.membership.removed.keys),
                newestRemoval: circle.membership.newestRemoval?.index)
            let report: SyncReport
            do {
                report = try Self.blocking { try await engine.sync(publishingHead: publishingHead) }
            } catch let disagreement as SyncHeadDisagreement {
                throw KeychainError(status: OSStatusCode.decode, message: disagreement.description)
            }
            let cursor = try store.syncZones().first { $0.zone == circle.zone.rawValue }?.cursor ?? 0
            state.withLock {
                $0.lastSync = Date()
                $0.lastError = nil
                $0.refused += report.refused
                $0.omitted += report.omitted
                if let reason = report.lastRefusal { $0.lastRefusal = ($0.lastSync!, reason) }
                // The feed reached what the server had taken before this round: no stall.
                // What it took in this round (this round's writes and head) is waited for
                // from now.
                if let unreached = $0.unreached, cursor >= unreached.position { $0.unreached = nil }
                if let position = report.acknowledged, position > cursor {
                    $0.unreached = ($0.unreached.map { max($0.position, position) } ?? position, $0.unreached?.since ?? Date())
                }
            }
            if report != SyncReport() {
                DaemonLog.logger.log(
                    level: report.refused > 0 ? .warning : .info,
                    "sync: received \(report.received), sent \(report.sent), merged \(report.conflicts) conflict(s), refused \(report.refused), \(report.waiting) waiting")
            }
            return report
        } catch {
            let message = (error as? KeychainError)?.message ?? "\(type(of: error))"
            state.withLock {
                $0.lastSync = Date()
                $0.lastError = message
            }
            DaemonLog.logger.warning("sync: a round failed: \(message)")
            throw error
        }
    }

    /// How long the feed may stay short of this device's own acknowledged write before
    /// `status` warns that the server may be withholding updates.
    func warnOfStall(after seconds: TimeInterval) {
        state.withLock { $0.stallAfter = seconds }
    }

    /// Runs rounds on a thread of its own while the daemon runs (nothing while sync is off):
    /// one soon after a local change joins the queue or the server hints at another
    /// device's, and one every `interval` whatever happens (hints may be lost).
    func startBackground(interval: Duration) {
        state.withLock { $0.background = true }
        store.syncChanges.observe { [wakeups] in wakeups.signal() }
        if (try? store.syncAccount()) != nil { startHints() }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        _ = ThreadLauncher.detach { [self] in
            while true {
                let timer = wakeups.wait(timeout: .now() + max(seconds, 0.01)) == .timedOut
                while wakeups.wait(timeout: .now()) == .success {}  // one round for all kicks so far
                guard (try? store.syncAccount()) != nil else { continue }
                _ = try? syncNow(publishingHead: timer)
            }
        }
    }

    /// Opens the hint socket to the account's server (again, after a restart or a join).
    func startHints() {
        guard state.withLock({ $0.background }), let account = try? store.syncAccount(), let identity = try? SyncIdentityBlob(data: account.identity),
            let server = try? SyncServerClient.checkedURL(account.server)
        else { return }
        let listening = SyncAgentClient.Listening(
            url: SyncServerURL.notify(server),
            authorization: { [enclave] in SyncServerClient.authorization(try enclave.syncCredential(identity: identity)) },
            changed: { [weak self] hint in self?.hinted(hint) })
        do {
            try agent.listen(listening)
        } catch {
            DaemonLog.logger.info("sync: no hint socket yet: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
        }
    }

    /// Whether the hint socket is kept (sync is on and the background runs).
    var listening: Bool { agent.isListening }

    /// Closes the hint socket and ends the agent: nothing speaks to the server until sync
    /// is on again.
    func stopHints() {
        agent.stop()
    }

    /// A hint from the server: a round unless it names a feed position this device has
    /// already read (its own writes come back as hints too).
    func hinted(_ hint: ChangeHint) {
        if let zone = hint.zone, hint != .subscribed,
            let cursor = try? store.syncZones().first(where: { $0.zone == zone.rawValue })?.cursor, hint.seq <= cursor
        {
            return
        }
        wakeups.signal()
    }

    // MARK: History

    /// The values of the item `uuid` that lost a merge, opened in the enclave.
    func history(of uuid: UUID, withSecrets: Bool) throws -> [SyncLostValue] {
        guard let circle = try circle() else { throw Self.off }
        let record = uuid.uuidString.lowercased()
        guard let id = SyncIdentifier(record) else { throw KeychainError.itemNotFound }
        return try store.syncHistory(record).map { entry in
            let context = SyncRecordContext(zone: circle.zone, record: id, version: entry.version, type: .item)
            let payload = try SyncItemPayload(decoding: try circle.sealer.open(entry.body, context: context), lostValues: true)
            let attributes = payload.attributes.compactMap { name, value in value.stringValue.map { "\(name)=\($0)" } }.sorted()
            return SyncLostValue(
                version: entry.version, writer: entry.writer, written: entry.clock.date.timeIntervalSinceReferenceDate, deleted: payload.isDeleted,
                attributes: attributes, secret: withSecrets ? payload.secret?.value : nil)
        }
    }

    // MARK: Status

    func status() throws -> SyncStatusReport {
        guard let account = try store.syncAccount() else { return .off }
        let zone = try store.syncZones().first?.zone ?? ""
        let circle = try Self.membership(store.syncMembership()).members.keys
        let members = circle.filter { !SyncRecovery.isRecovery($0) }.map(\.rawValue).sorted()
        let recovery = circle.first(where: SyncRecovery.isRecovery)?.rawValue
        let counts = try store.syncCounts()
        let last = state.withLock { ($0.lastSync, $0.lastError, $0.refused, $0.lastRefusal, $0.omitted) }
        let stall = state.withLock { state in state.unreached.map { ($0.position, $0.since, state.stallAfter) } }
        let alarm = try store.syncAlarm(zone: zone).map {
            "zone \($0.zone) stopped at \($0.raised.formatted(.iso8601)): "
                + "device \($0.device)'s signed head disagrees with what the server gave this device: \($0.reason). "
                + "The server may be lying; nothing it sent since was applied, and sync resumes by itself when they agree"
        }
        let heads = try store.syncHeads(zone: zone).values.filter { $0.device != account.device && members.contains($0.device) }
        let chainLength = try store.syncMembership().count
        var notices = heads.filter { $0.chainLength > chainLength }.map {
            "device \($0.device) has seen \($0.chainLength) device-list entries; the server has given this device \(chainLength)"
        }
        if recovery == nil {
            notices.append("this circle has no recovery key: if every device is lost, so are the synced items (`security sync recovery-key create` makes one)")
        }
        if try store.waitingSyncIncoming().contains(where: { $0.zone == zone && $0.type == SyncRecordType.keyPointer.rawValue }) {
            notices.append(
                "a change of the zone's keys waits (for device-list entries the server has not given this device — it may be withholding "
                    + "a device's removal — or for the next unlock): nothing is sent until it is taken")
        }
        if let removal = try Self.membership(store.syncMembership()).newestRemoval,
            try (store.syncKeyPointer(zone)?.epoch ?? 0) <= removal.index
        {
            notices.append(
                removal.signer.rawValue == account.device
                    ? "this device removed a device but did not finish changing the zone's keys: nothing is sent until "
                        + "`security sync remove-device` is run again for it"
                    : "the zone's keys predate the removal at device-list entry \(removal.index) and the server has not given this device "
                        + "the new ones (it may be withholding them): nothing is sent under keys the removed device holds until they come")
        }
        if let unverified = state.withLock({ $0.unverified }) {
            let passed = unverified.count == 1 ? "an entry at index \(unverified.index) that does not" : "\(unverified.count) entries from index \(unverified.index) that do not"
            notices.append(
                "the server gave a device list with \(passed) verify (\(unverified.reason)): passed over; this device acts on the \(chainLength) entries it verified")
        }
        if let (position, since, after) = stall, Date().timeIntervalSince(since) > after {
            let cursor = try store.syncZones().first?.cursor ?? 0
            notices.append(
                "the server took this device's write at feed position \(position) at \(since.formatted(.iso8601)) but has given it nothing past "
                    + "\(cursor) since: it may be withholding updates")
        }
        return SyncStatusReport(
            enabled: true, server: account.server, account: account.account, device: account.device, zone: zone, members: members,
            pending: UInt32(clamping: counts.pending), synced: UInt32(clamping: counts.mirrored), waiting: UInt32(clamping: counts.waiting),
            history: UInt32(clamping: counts.history), lastSync: last.0?.timeIntervalSinceReferenceDate, lastError: last.1,
            refused: UInt32(clamping: last.2), lastRefused: last.3?.at.timeIntervalSinceReferenceDate, lastRefusal: last.3?.reason,
            omitted: UInt32(clamping: last.4), alarm: alarm, headsAgreed: UInt32(clamping: heads.filter(\.agreed).count), notices: notices,
            recovery: recovery)
    }

    // MARK: The circle as stored

    struct Circle {
        var device: SyncIdentifier
        var zone: SyncIdentifier
        var sealer: EnclaveSyncSealer
        var client: SyncServerClient
        var account: SyncIdentifier
        var identity: SyncIdentityBlob
        var membership: MembershipState

        /// The zone's current zone key (the one shares carry).
        var zoneKey: SyncKeyBlob? { sealer.keyring.current.zone }
    }

    /// The account, its verified chain and its keys, as this device keeps them; nil when sync is off.
    func circle() throws -> Circle? {
        guard let account = try store.syncAccount() else { return nil }
        guard let device = SyncIdentifier(account.device), let accountID = SyncIdentifier(account.account),
            let zoneRow = try store.syncZones().first, let zone = SyncIdentifier(zoneRow.zone), let current = try store.syncZoneKeys(zoneRow.zone),
            let classA = SyncIdentifier(current.classA), let classC = SyncIdentifier(current.classC)
        else { throw KeychainError.decode("this keychain's sync state is damaged") }
        let identity = try SyncIdentityBlob(data: account.identity)
        let membership = try Self.membership(store.syncMembership())
        guard membership.account == accountID, membership.members[device] != nil else {
            throw KeychainError.decode("this device is not a member of its sync circle")
        }
        var keys: [SyncIdentifier: SyncKeyBlob] = [:]
        for row in try store.syncKeys(zone: zoneRow.zone) {
            let blob = try SyncKeyBlob(data: row.blob)
            keys[blob.keyID] = blob
        }
        guard let zoneKey = SyncIdentifier(current.zoneKey) else { throw KeychainError.decode("this keychain's sync state is damaged") }
        let client = try SyncServerClient(server: account.server, credential: try enclave.syncCredential(identity: identity), http: agent)
        let keyring = SyncKeyring(keys: keys, zoneKey: zoneKey, classA: classA, classC: classC)
        let sealer = EnclaveSyncSealer(enclave: enclave, store: store, device: device, identity: identity, keyring: keyring, membership: membership)
        return Circle(device: device, zone: zone, sealer: sealer, client: client, account: accountID, identity: identity, membership: membership)
    }

    /// The chain's entries after the pin, from the server: verified to extend it (a chain
    /// that does not is a fork, and nothing is applied), kept, and the circle's members
    /// updated, so records of a device that joined through another member open here.
    ///
    /// Entries are taken one by one up to the first that does not verify (garbage appended
    /// with a stolen credential, a forged or forked entry): that one and the rest are passed
    /// over and reported (``State/unverified``), and the round goes on with the chain this
    /// device verified — so one bad entry neither halts the circle nor stops a removal of the
    /// device that wrote it.
    func refreshMembership(_ circle: Circle) throws -> Circle {
        let client = circle.client
        let after = circle.membership.pin.length - 1
        let entries = try Self.blocking { try await client.membership(after: after) }
        var membership = circle.membership
        var taken: [Data] = []
        var unverified: (index: Int64, reason: String)?
        for entry in entries {
            do throws(SyncCryptoError) {
                try membership.append(try MembershipRecord(decoding: entry.entry))
                taken.append(entry.entry)
            } catch {
                unverified = (entry.index, error.message)
                break
            }
        }
        state.withLock { $0.unverified = unverified.map { (index: $0.index, reason: $0.reason, count: entries.count - taken.count) } }
        if let unverified {
            DaemonLog.logger.warning(
                "sync: passed over \(entries.count - taken.count) device-list entr(ies) from index \(unverified.index) that do not verify: \(unverified.reason)")
        }
        guard !taken.isEmpty else { return circle }
        guard membership.members[circle.device] != nil else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "this device was removed from its sync circle")
        }
        try store.appendSyncMembership(taken, from: Int(circle.membership.pin.length))
        var refreshed = circle
        refreshed.membership = membership
        refreshed.sealer = EnclaveSyncSealer(
            enclave: enclave, store: store, device: circle.device, identity: circle.identity, keyring: circle.sealer.keyring, membership: membership)
        DaemonLog.logger.info("sync: the circle has \(membership.members.count) devices")
        return refreshed
    }

    /// The pinned chain, verified again from its genesis.
    static func membership(_ entries: [Data]) throws -> MembershipState {
        do {
            let records = try entries.map { try MembershipRecord(decoding: $0) }
            guard let first = records.first else { throw KeychainError.decode("this keychain's membership chain is empty") }
            var state = try MembershipState(genesis: first)
            try state.extend(with: Array(records.dropFirst()))
            return state
        } catch let error as SyncCryptoError {
            throw KeychainError.decode(error.description)
        }
    }

    /// Runs `body` on the concurrency pool and waits for it on this thread (a request's or
    /// the timer's, never a pool thread).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = BlockingMutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
