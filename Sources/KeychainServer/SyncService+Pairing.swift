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
import SyncJoin
import SyncProtocol

/// A pairing this device opened as a member, between the requests of `security sync pair`.
struct PairingSession: Sendable {
    var member: MemberPairing
    var expires: Int64
    /// The device that proved it knows the code, once it has.
    var request: JoinRequest?
    /// An `AwaitSyncPairing` is running the exchange.
    var awaiting = false
}

// Joining a device (docs/ARCHITECTURE.md, "Joining a device"): a member opens a pairing and
// shows a code; the new device claims it and both run the join exchange (CPace over the
// server's mailbox, SyncJoin) — a wrong code ends the pairing; the member approves the device
// that proved it knows the code: adds it to the chain (signed in the enclave), registers its
// credential, shares the zone key to it (HPKE, in the enclave), welcomes it with the chain's
// head to pin. The new device verifies the chain through that pin, opens its share and the
// class keys, and syncs.
extension SyncService {
    /// How often a side polls the mailbox while it waits for the other.
    static let mailboxPoll = Duration.milliseconds(200)

    /// The record that carries the zone key to `device`.
    static func shareRecord(for device: SyncIdentifier) throws -> SyncIdentifier {
        // Ids this code makes are 36 characters (25 for a recovery key); a member's id from the
        // chain may be as long as any id, and leave no room for the prefix.
        guard let record = SyncIdentifier("share-" + device.rawValue) else { throw KeychainError.decode("a member's device id is too long to share a key to") }
        return record
    }

    // MARK: The member

    /// Opens a pairing: the code to show.
    func startPairing() throws -> SyncPairingStarted {
        guard let circle = try circle() else { throw Self.off }
        let opened = try Self.blocking { try await circle.client.openPairing() }
        let code = JoinCode.short(nameplate: opened.nameplate)
        let member = try Self.refusing { try MemberPairing(code: code, pairing: opened.pairing, device: circle.device) }
        let now = Int64(Date().timeIntervalSince1970)
        state.withLock { state in
            state.pairings = state.pairings.filter { $0.value.expires > now }  // a pair command that went away
            state.pairings[opened.nameplate] = PairingSession(member: member, expires: opened.expires)
        }
        DaemonLog.logger.info("sync: opened pairing \(opened.nameplate)")
        return SyncPairingStarted(code: code.text, nameplate: opened.nameplate)
    }

    /// Waits for the new device and runs the member's side of the exchange: the device that
    /// proved it knows the code. Any failure closes the pairing (the code is dead).
    func awaitPairing(_ nameplate: Int64) throws -> SyncPairingRequest {
        let session = state.withLock { state -> PairingSession? in
            guard var session = state.pairings[nameplate], session.request == nil, !session.awaiting else { return nil }
            session.awaiting = true
            state.pairings[nameplate] = session
            return session
        }
        guard let session else { throw KeychainError.param("no pairing \(nameplate) is waiting here") }
        guard let circle = try circle() else { throw Self.off }
        let client = circle.client
        do {
            let (member, request) = try Self.blocking {
                var member = session.member
                var read: Int64 = -1
                let share = try await Self.next(client, nameplate, after: &read, until: session.expires)
                try await client.postPairingMessage(nameplate, try Self.refusing { try member.answer(share) }.encoded)
                let confirmation = try await Self.next(client, nameplate, after: &read, until: session.expires)
                let request = try Self.refusing { try member.request(confirmation) }
                return (member, request)
            }
            state.withLock { $0.pairings[nameplate] = PairingSession(member: member, expires: session.expires, request: request) }
            return SyncPairingRequest(device: request.keys.device.rawValue)
        } catch {
            close(nameplate, client: client)
            DaemonLog.logger.warning("sync: pairing \(nameplate) failed: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
            throw error
        }
    }

    /// Adds the device that asked through `nameplate` to the circle and welcomes it, or
    /// refuses it (the pairing closes; the device learns it was not approved).
    func approvePairing(_ nameplate: Int64, approve: Bool) throws {
        let session = state.withLock { state -> PairingSession? in
            guard state.pairings[nameplate]?.request != nil else { return nil }
            return state.pairings.removeValue(forKey: nameplate)
        }
        guard let session, let request = session.request else {
            throw KeychainError.param("no device asked to join through pairing \(nameplate)")
        }
        guard let current = try circle() else { throw Self.off }
        guard approve else {
            close(nameplate, client: current.client)
            DaemonLog.logger.notice("sync: pairing \(nameplate): the device was not approved")
            return
        }
        // Time left to welcome it: a device added after its pairing expired could never join.
        guard session.expires > Int64(Date().timeIntervalSince1970) + 30 else {
            close(nameplate, client: current.client)
            throw KeychainError(status: OSStatusCode.authFailed, message: "the pairing expired before the device was approved: pair again")
        }
        do {
            try rounds.withLock { _ in
                    // The circle, its chain and its keys as they are now (another member may have
                    // added entries, or changed the keys: the share must carry the current zone key).
                    _ = try? round(publishingHead: false)
                    guard let stored = try circle() else { throw Self.off }
                    let circle = try refreshMembership(stored)
                    guard let zoneKey = circle.zoneKey else { throw KeychainError(status: OSStatusCode.internalComponent, message: "the zone key is missing") }
                    var membership = circle.membership
                    let added = try enclave.signMembershipRecord(membership.unsigned(.add(request.keys), signer: circle.device), as: circle.identity)
                    try Self.refusing { try membership.append(added) }
                    let context = SyncRecordContext(zone: circle.zone, record: try Self.shareRecord(for: request.keys.device), version: 1, type: .keyShare)
                    let share = try enclave.sealSyncKeyShare(zoneKey, context: context, to: request.keys, identity: circle.identity)
                    let welcome = try Self.refusing { try session.member.welcome(JoinWelcome(account: circle.account, pin: membership.pin)) }
                    let client = circle.client
                    // The credential and the share first (harmless to a device not in the chain),
                    // then the chain's entry, kept here, then the welcome: a failure before the
                    // entry adds no member that cannot join.
                    try Self.blocking {
                        try await client.registerDevice(request.keys.device, token: request.credential)
                        _ = try await client.apply(
                            [SyncRecord(record: context.record, type: SyncRecordType.keyShare.rawValue, version: 1, body: share)], zone: circle.zone)
                        try await client.appendMembership(MembershipEntry(index: added.index, entry: added.encoded))
                    }
                    try store.appendSyncMembership([added.encoded], from: Int(added.index))
                    try Self.blocking { try await client.postPairingMessage(nameplate, welcome.encoded) }
            }
            DaemonLog.logger.notice("sync: device \(request.keys.device) joined the circle")
        } catch {
            close(nameplate, client: current.client)
            throw error
        }
    }

    // MARK: The new device

    /// Joins the circle of the member showing `code` on `server`: the exchange, the wait for
    /// approval, the chain verified through the welcome's pin, the zone key from its share,
    /// the class keys from their records; then sync is on and a first round runs.
    func join(server: String, code text: String) throws -> SyncStatusReport {
        guard enabledHere else { throw KeychainError(status: OSStatusCode.unimplemented, message: "the System keychain does not sync") }
        let url = try SyncServerClient.checkedURL(server)
        let code: JoinCode
        do { code = try JoinCode(parsing: text) } catch { throw KeychainError.param("not a join code: a code reads like 42-4821-0937") }
        // The exchange and the wait for approval (minutes) hold no lock; only turning sync on
        // does, checked again there.
        do {
            guard try store.syncAccount() == nil else { throw Self.alreadyOn }
            let device = SyncIdentifier.random()
            let identity = try enclave.createSyncIdentity(device: device)
            let credential = try enclave.syncCredential(identity: identity)
            let mailbox = try SyncServerClient(server: url.absoluteString, pairingToken: SecretBytes((0..<32).map { _ in UInt8.random(in: 0...255) }), http: agent)
            let member = try SyncServerClient(server: url.absoluteString, credential: credential, http: agent)
            let credentialBytes = credential.withUnsafeBytes { Data($0) }
            let nameplate = code.nameplate
            let welcome = try Self.blocking {
                let claimed = try await mailbox.claimPairing(nameplate)
                let expires = Int64(Date().timeIntervalSince1970) + SyncLimits.pairingLifetime
                var exchange = try Self.refusing { try NewDeviceJoin(code: code, pairing: claimed.pairing, keys: identity.publicKeys, credential: credentialBytes) }
                try await mailbox.postPairingMessage(nameplate, exchange.share.encoded)
                var read: Int64 = -1
                let reply = try await Self.next(mailbox, nameplate, after: &read, until: expires)
                let confirmation: JoinMessage
                do {
                    confirmation = try Self.refusing { try exchange.confirm(reply) }
                } catch {
                    try? await mailbox.postPairingMessage(nameplate, NewDeviceJoin.abort.encoded)
                    throw error
                }
                try await mailbox.postPairingMessage(nameplate, confirmation.encoded)
                let message = try await Self.next(mailbox, nameplate, after: &read, until: expires)
                let welcome = try Self.refusing { try exchange.welcome(message) }
                try? await mailbox.closePairing(nameplate)
                return welcome
            }
            // Now a member: the chain, verified through the pin the welcome carried, and the
            // zone's key records.
            let (entries, records) = try Self.blocking { (try await member.membership(after: -1), try await Self.keyRecords(member)) }
            let chain = try Self.refusing {
                try MembershipState.verify(try entries.map { try MembershipRecord(decoding: $0.entry) }, account: welcome.account, through: welcome.pin)
            }
            guard chain.members[device] == identity.publicKeys else { throw KeychainError.decode("the circle's chain does not add this device") }
            let keys = try openKeys(records, chain: chain, identity: identity, device: device)
            try rounds.withLock { _ in
                guard try store.syncAccount() == nil else { throw Self.alreadyOn }
                try store.enableSync(
                    SyncAccountRecord(server: url.absoluteString, account: welcome.account.rawValue, device: device.rawValue, identity: identity.data),
                    circle: keys.rows(membership: entries.map(\.entry)))
            }
            DaemonLog.logger.notice("sync: joined a circle of \(chain.members.count) devices as device \(device)")
        }
        _ = try? syncNow()
        startHints()
        return try status()
    }

    /// The zone key from this device's share, every class key sealed under it (a rotation
    /// seals the older ones again under the new zone key, so records written before it stay
    /// readable), and which class keys are current: the key pointer's, or — in a circle
    /// whose keys never changed — the only one of each class. The first round takes the
    /// pointer again from the feed and records its version.
    func openKeys(_ records: [SyncRecord], chain: MembershipState, identity: SyncIdentityBlob, device: SyncIdentifier) throws -> OpenedKeys {
        let shareID = try Self.shareRecord(for: device)
        guard let share = records.last(where: { $0.type == SyncRecordType.keyShare.rawValue && $0.record == shareID }) else {
            throw KeychainError.decode("the server holds no key share for this device")
        }
        // From whichever member shared it last (the one that added this device, or one that
        // changed the keys since).
        guard let sharer = chain.members[try Self.refusing { try SyncKeyShare(decoding: share.body).sender }] else {
            throw KeychainError.decode("this device's key share is from a device that is not a member")
        }
        let zoneKey = try enclave.openSyncKeyShare(
            share.body, context: SyncRecordContext(zone: Self.zone, record: shareID, version: share.version, type: .keyShare), identity: identity,
            sender: sharer)
        var classKeys: [SyncIdentifier: SyncKeyBlob] = [:]
        for record in records where record.type == SyncRecordType.classKey.rawValue {
            let envelope = try EnclaveSyncSealer.envelope(record.body)
            guard envelope.parentKey == zoneKey.keyID, let writerKeys = chain.members[envelope.writer] else { continue }
            let key = try enclave.openSyncKey(
                record.body, context: SyncRecordContext(zone: Self.zone, record: record.record, version: record.version, type: .classKey), parent: zoneKey,
                writer: writerKeys)
            classKeys[key.keyID] = key
        }
        let current: (classA: SyncIdentifier, classC: SyncIdentifier)
        if let record = records.last(where: { $0.type == SyncRecordType.keyPointer.rawValue && $0.record == SyncKeyPointer.recordID }) {
            let envelope = try EnclaveSyncSealer.envelope(record.body)
            guard let parent = classKeys[envelope.parentKey], let writer = chain.members[envelope.writer] else {
                throw KeychainError.decode("the zone's key pointer is under a key, or by a device, this device does not know")
            }
            let context = SyncRecordContext(zone: Self.zone, record: record.record, version: record.version, type: .keyPointer)
            let pointer = try Self.refusing { try SyncKeyPointer(decoding: try enclave.openSyncRecord(record.body, context: context, parent: parent, writer: writer)) }
            guard pointer.zone == Self.zone, pointer.zoneKey == zoneKey.keyID, classKeys[pointer.classA]?.role == .classA, classKeys[pointer.classC]?.role == .classC
            else { throw KeychainError.decode("the zone's key pointer names keys this device was not given") }
            guard pointer.epoch <= chain.pin.length, chain.removed.values.contains(where: { $0.index == pointer.epoch - 1 && $0.signer == envelope.writer })
            else { throw KeychainError.decode("the zone's key pointer follows no removal its writer signed") }
            current = (pointer.classA, pointer.classC)
        } else {
            let a = classKeys.values.filter { $0.role == .classA }
            let c = classKeys.values.filter { $0.role == .classC }
            guard a.count == 1, c.count == 1 else { throw KeychainError.decode("the server holds no class keys for the zone, or no pointer to the current ones") }
            current = (a[0].keyID, c[0].keyID)
        }
        return OpenedKeys(zone: zoneKey, classKeys: classKeys.values.sorted { $0.keyID.rawValue < $1.keyID.rawValue }, classA: current.classA, classC: current.classC)
    }

    /// Every record of the zone but items: the keys, shares, pointer and heads a device needs
    /// before it can read the items.
    static func keyRecords(_ client: SyncServerClient) async throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        var cursor: Int64 = 0
        while true {
            let page = try await client.changes(zone: Self.zone, after: cursor, limit: SyncLimits.changesPage)
            records += page.records.filter { $0.type != SyncRecordType.item.rawValue }
            guard page.more, page.high > cursor else { break }
            cursor = page.high
        }
        return records
    }

    // MARK: The mailbox

    /// The other side's next message, polled until `expires` (seconds since 1970).
    static func next(_ client: SyncServerClient, _ nameplate: Int64, after read: inout Int64, until expires: Int64) async throws -> JoinMessage {
        while Int64(Date().timeIntervalSince1970) < expires {
            let messages: [PairingMessage]
            do {
                messages = try await client.pairingMessages(nameplate, after: read)
            } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
                throw KeychainError(status: OSStatusCode.authFailed, message: "the pairing was closed: the code was wrong, refused, or expired")
            }
            if let first = messages.first {
                read = first.index
                return try refusing { try JoinMessage(decoding: first.body) }
            }
            try await Task.sleep(for: mailboxPoll)
        }
        throw KeychainError(status: OSStatusCode.authFailed, message: "the pairing expired: ask for a new code")
    }

    private func close(_ nameplate: Int64, client: SyncServerClient) {
        state.withLock { _ = $0.pairings.removeValue(forKey: nameplate) }
        _ = try? Self.blocking { try await client.closePairing(nameplate) }
    }

    static var alreadyOn: KeychainError {
        KeychainError(status: OSStatusCode.duplicateItem, message: "sync is already on for this keychain (security sync disable first)")
    }

    static var off: KeychainError { KeychainError(status: OSStatusCode.itemNotFound, message: "sync is not on for this keychain") }

    /// Runs `body`, answering a refusal of SyncCrypto's or SyncJoin's as a keychain error
    /// with its message (which names no value): a wrong code as `errSecAuthFailed`.
    static func refusing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SyncCryptoError {
            throw KeychainError(status: error.code == .wrongCode ? OSStatusCode.authFailed : OSStatusCode.decode, message: error.message)
        }
    }
}

/// The zone's keys as a joining (or recovering) device opened them.
struct OpenedKeys {
    var zone: SyncKeyBlob
    var classKeys: [SyncKeyBlob]
    var classA: SyncIdentifier
    var classC: SyncIdentifier

    /// The circle's rows to keep, with the chain's entries.
    func rows(membership: [Data]) -> SyncCircleRows {
        let zoneName = SyncService.zone.rawValue
        return SyncCircleRows(
            membership: membership,
            keys: ([zone] + classKeys).map { SyncKeyRow(key: $0.keyID.rawValue, zone: zoneName, role: Int($0.role.rawValue), blob: $0.data) },
            zone: SyncZoneKeys(zone: zoneName, zoneKey: zone.keyID.rawValue, classA: classA.rawValue, classC: classC.rawValue))
    }
}
