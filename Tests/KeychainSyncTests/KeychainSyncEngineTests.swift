import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainSync
import KeychainTestSupport
import SyncCrypto
import SyncProtocol
import Testing

/// The engine between real keychain stores and a real server store: items converge, merges
/// keep both sides' changes and the loser in the history, deletions and collisions settle
/// the same way everywhere, and what may not leave a device never reaches the server.
@Suite struct KeychainSyncEngineTests {
    func add(_ devices: SyncedDevices, _ index: Int, account: String, secret: String, _ extra: [String: KeychainValue] = [:]) throws {
        let device = devices[index]
        _ = try device.store.add(
            genericPassword(account: account, service: "svc", ["sync": .bool(true), "v_Data": .utf8(secret)]).merging(extra) { $1 }, caller: device.keychain.caller)
    }

    func update(_ devices: SyncedDevices, _ index: Int, account: String, _ attributes: [String: KeychainValue]) throws {
        let device = devices[index]
        try device.store.update(genericPassword(account: account, service: "svc", ["sync": .bool(true)]), attributes: attributes, caller: device.keychain.caller)
    }

    func uuid(_ devices: SyncedDevices, _ index: Int, account: String) throws -> String {
        let device = devices[index]
        guard case .data(let reference)? = try device.store.copyMatching(
            genericPassword(account: account, ["sync": .bool(true), "r_PersistentRef": .bool(true)]), caller: device.keychain.caller)
        else { throw KeychainError.itemNotFound }
        return try PersistentReference(data: reference).uuid.uuidString.lowercased()
    }

    @Test func addsChangesAndDeletesReachEveryDevice() async throws {
        try await SyncedDevices.with(count: 3) { devices in
        try add(devices, 0, account: "alice", secret: "first secret", ["labl": .string("Mail")])
        try await devices.converge()
        #expect(try devices.items(1) == ["genp | alice | svc | Mail | - | first secret"])
        #expect(try devices.items(2) == devices.items(1))

        try update(devices, 1, account: "alice", ["labl": .string("Work mail"), "v_Data": .utf8("second secret")])
        try await devices.converge()
        #expect(try devices.items(0) == ["genp | alice | svc | Work mail | - | second secret"])
        #expect(try devices.items(2) == devices.items(0))

        try devices[2].store.delete(genericPassword(account: "alice", ["sync": .bool(true)]), caller: devices[2].keychain.caller)
        try await devices.converge()
        for index in 0..<3 { #expect(try devices.items(index).isEmpty, "device \(index)") }
        }
    }

    /// More changes than one batch holds go in one sync, batch after batch (a first version
    /// sent one batch a round).
    @Test func aQueueLongerThanABatchIsSentInOneSync() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            for index in 0..<250 { try add(devices, 0, account: "account \(index)", secret: "secret \(index)") }
            try await devices.sync(0)
            try await devices.sync(1)
            let totals = devices.totals.withLock { $0 }
            #expect(totals.sent == 250 && totals.received == 250, "\(totals)")
            #expect(try devices.items(1).count == 250)
            #expect(try devices[0].store.pendingSyncChanges(limit: 10).isEmpty)
        }
    }

    @Test func whatMayNotLeaveADeviceNeverReachesTheServer() async throws {
        try await SyncedDevices.with(count: 2) { devices in
        let caller = devices[0].keychain.caller
        _ = try devices[0].store.add(genericPassword(account: "local-only", service: "svc", ["v_Data": .utf8("local secret")]), caller: caller)
        _ = try devices[0].store.add(
            genericPassword(account: "this-device", service: "svc", ["sync": .bool(true), "pdmn": .string("aku"), "v_Data": .utf8("device secret")]), caller: caller)
        try add(devices, 0, account: "synced", secret: "synced secret", ["labl": .string("Visible label")])
        try await devices.converge()
        #expect(try devices.items(1) == ["genp | synced | svc | Visible label | - | synced secret"])
        let record = try uuid(devices, 0, account: "synced")

        // The server's file holds ciphertext only: no account, service, label or secret.
        try await devices.close()
        let file = try Data(contentsOf: URL(fileURLWithPath: devices.directory + "/server.sqlite"))
        for plaintext in ["local-only", "this-device", "synced", "svc", "Visible label", "synced secret", "local secret", "device secret"] {
            #expect(file.range(of: Data(plaintext.utf8)) == nil, "\(plaintext) is in the server's database")
        }
        // What docs/SECURITY.md says it does learn of a record: its id, which is the item's uuid
        // (the uuid column of each device's keychain.db), and, in the envelope, the writer's
        // device id and the parent key's id (which class key: the protection class's group).
        for visible in [record, devices[0].id.rawValue, SharedSyncKeys.classAKeyID.rawValue] {  // class A: an item's default
            #expect(file.range(of: Data(visible.utf8)) != nil, "\(visible) is not in the server's database: docs/SECURITY.md is wrong")
        }
        }
    }

    @Test func concurrentEditsMergePerFieldAndTheLoserIsKept() async throws {
        try await SyncedDevices.with(count: 2) { devices in
        try add(devices, 0, account: "alice", secret: "original", ["labl": .string("Label"), "icmt": .string("Comment")])
        try await devices.converge()

        // Apart: one device changes the label, the other the comment; both change the secret.
        devices[0].transport.offline = true
        try update(devices, 0, account: "alice", ["labl": .string("Label from 0"), "v_Data": .utf8("secret from 0")])
        try update(devices, 1, account: "alice", ["icmt": .string("Comment from 1")])
        try await Task.sleep(for: .milliseconds(5))  // device 1's secret is the later write
        try update(devices, 1, account: "alice", ["v_Data": .utf8("secret from 1")])
        try await devices.converge()
        devices[0].transport.offline = false
        try await devices.converge()

        let expected = ["genp | alice | svc | Label from 0 | Comment from 1 | secret from 1"]
        #expect(try devices.items(0) == expected)
        #expect(try devices.items(1) == expected)
        // Device 0 merged, and its secret lost: kept in its history, sealed.
        #expect(try devices[0].store.pendingSyncChanges(limit: 10).isEmpty, "nothing left to send")
        let record = try uuid(devices, 0, account: "alice")
        let history = try devices[0].store.syncHistory(record)
        #expect(history.count == 1 && history[0].writer == devices[0].id.rawValue)
        #expect(history[0].body.range(of: Data("secret from 0".utf8)) == nil, "the history is sealed")
        }
    }

    @Test func anEditAfterADeleteBringsTheItemBack() async throws {
        try await SyncedDevices.with(count: 2) { devices in
        try add(devices, 0, account: "alice", secret: "kept", ["labl": .string("Label")])
        try await devices.converge()
        devices[0].transport.offline = true
        try devices[0].store.delete(genericPassword(account: "alice", ["sync": .bool(true)]), caller: devices[0].keychain.caller)
        try await Task.sleep(for: .milliseconds(5))
        try update(devices, 1, account: "alice", ["labl": .string("Edited later")])
        try await devices.converge()
        devices[0].transport.offline = false
        try await devices.converge()
        #expect(try devices.items(0) == ["genp | alice | svc | Edited later | - | kept"])
        #expect(try devices.items(1) == devices.items(0))
        }
    }

    @Test func twoNewItemsWithOnePrimaryKeySettleOnTheLowerUUID() async throws {
        try await SyncedDevices.with(count: 3) { devices in
        for device in devices.devices { device.transport.offline = true }
        try add(devices, 0, account: "alice", secret: "from 0")
        try add(devices, 1, account: "alice", secret: "from 1")
        for device in devices.devices { device.transport.offline = false }
        try await devices.converge()
        let items = try (0..<3).map { try devices.items($0) }
        #expect(items[0].count == 1)
        #expect(items[1] == items[0] && items[2] == items[0], "\(items)")
        }
    }

    @Test func aClassARecordWaitsForTheUnlockAndIsAppliedThen() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            let reader = devices[1]
            let passcode = SecretBytes("1234".utf8)
            try reader.keychain.keybag.changePasscode(old: nil, new: passcode)
            try add(devices, 0, account: "when-unlocked", secret: "class A secret", ["pdmn": .string("ak")])
            try add(devices, 0, account: "after-first-unlock", secret: "class C secret", ["pdmn": .string("ck")])
            try await devices.sync(0)

            reader.keychain.keybag.lock()
            let locked = try await reader.engine.sync()
            #expect(locked.received == 1 && locked.waiting == 1 && locked.refused == 0, "\(locked)")
            #expect(try devices.items(1) == ["genp | after-first-unlock | svc | - | - | class C secret"])
            #expect(try reader.store.waitingSyncIncoming().count == 1)

            try reader.keychain.keybag.unlock(passcode: passcode)
            let unlocked = try await reader.engine.sync()
            #expect(unlocked.received == 1 && unlocked.waiting == 0, "\(unlocked)")
            #expect(try devices.items(1) == devices.items(0))
            #expect(try reader.store.waitingSyncIncoming().isEmpty)
        }
    }

    /// A record stamped further ahead of this device's clock than the skew allowed waits
    /// (applied at once, it would carry this device's clock into its future), and is applied
    /// once this clock reaches it.
    @Test func aRecordStampedAheadOfThisClockWaitsForIt() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            try add(devices, 0, account: "from-ahead", secret: "early")
            try await devices.sync(0)

            let reader = devices[1]
            let hourBehind = try KeychainSyncEngine(
                store: reader.store, sealer: reader.engine.sealerForTests, transport: reader.transport, device: reader.id, zone: SyncedDevices.zone,
                now: { Date().addingTimeInterval(-3600) })
            let early = try await hourBehind.sync()
            #expect(early.waiting == 1 && early.received == 0 && early.refused == 0, "\(early)")
            #expect(try devices.items(1).isEmpty)
            #expect(try reader.store.waitingSyncIncoming().count == 1)
            // Within the skew: taken.
            let minutesBehind = try KeychainSyncEngine(
                store: reader.store, sealer: reader.engine.sealerForTests, transport: reader.transport, device: reader.id, zone: SyncedDevices.zone,
                now: { Date().addingTimeInterval(-KeychainSyncEngine.maximumClockSkew / 2) })
            let inTime = try await minutesBehind.sync()
            #expect(inTime.received == 1 && inTime.waiting == 0, "\(inTime)")
            #expect(try devices.items(1) == devices.items(0))
            #expect(try reader.store.waitingSyncIncoming().isEmpty)
        }
    }

    /// A queued change to a class A item that synced before does not hold back the others
    /// while the device is locked (a first version opened the item's mirror row, under class
    /// A's key, before it checked the lock, and the whole send failed).
    @Test func aLockedClassAChangeDoesNotHoldBackTheRest() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            let writer = devices[0]
            let passcode = SecretBytes("1234".utf8)
            try writer.keychain.keybag.changePasscode(old: nil, new: passcode)
            try add(devices, 0, account: "when-unlocked", secret: "a1", ["pdmn": .string("ak")])
            try add(devices, 0, account: "after-first-unlock", secret: "c1", ["pdmn": .string("ck")])
            try await devices.sync(0)
            try update(devices, 0, account: "when-unlocked", ["v_Data": .utf8("a2")])
            try update(devices, 0, account: "after-first-unlock", ["v_Data": .utf8("c2")])

            writer.keychain.keybag.lock()
            let locked = try await writer.engine.sync()
            #expect(locked.sent == 1 && locked.waiting == 1, "\(locked)")
            try await devices.sync(1)
            #expect(try devices.items(1).contains("genp | after-first-unlock | svc | - | - | c2"))

            try writer.keychain.keybag.unlock(passcode: passcode)
            try await devices.converge()
            #expect(try devices.items(1) == devices.items(0))
            #expect(try devices.items(1).contains("genp | when-unlocked | svc | - | - | a2"))
        }
    }

    /// An item made local (or ThisDeviceOnly) leaves the other devices, and its value from
    /// then on never reaches the server (a first version sent it, as an upsert).
    @Test func anItemMadeLocalLeavesTheOthersAndItsValueStaysHere() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            try add(devices, 0, account: "alice", secret: "shared secret")
            try add(devices, 0, account: "bob", secret: "shared too")
            try await devices.converge()
            #expect(try devices.items(1).count == 2)

            try update(devices, 0, account: "alice", ["sync": .bool(false), "v_Data": .utf8("now local only")])
            try update(devices, 0, account: "bob", ["pdmn": .string("aku"), "v_Data": .utf8("now this device only")])
            // Meanwhile the other device changes alice: its change must not bring her back here as synchronizable.
            try update(devices, 1, account: "alice", ["labl": .string("Changed elsewhere")])
            try await devices.converge()
            // Bob left the other device. Alice was edited there after she left sync here: the
            // later edit wins there (an edit after a delete), with the value it had — and here
            // the local alice stays as she is.
            #expect(try devices.items(1) == ["genp | alice | svc | Changed elsewhere | - | shared secret"])
            #expect(try devices.items(0) == ["genp | bob | svc | - | - | now this device only"])
            let local = try devices[0].store.copyMatching(
                genericPassword(account: "alice", ["r_Data": .bool(true)]), caller: devices[0].keychain.caller)
            #expect(local == .utf8("now local only"))
            // The server holds bob's deletion, and neither value they have here now.
            let records = try await devices[1].transport.changes(zone: SyncedDevices.zone, after: 0, limit: 100).records
            #expect(records.count == 2 && records.filter(\.tombstone).count == 1, "\(records.map { ($0.version, $0.tombstone) })")
            for record in records {
                let plaintext = try devices[1].engine.sealerForTests.open(
                    record.body, context: SyncRecordContext(zone: SyncedDevices.zone, record: record.record, version: record.version, type: .item, tombstone: record.tombstone))
                let text = plaintext.withUnsafeBytes { Data($0) }
                #expect(text.range(of: Data("now".utf8)) == nil, "a value set after the item left sync reached the server")
            }
        }
    }

    /// A ThisDeviceOnly item holding the primary key a received item has stays, and the
    /// received item stays on its own device (neither is deleted for the other).
    @Test func aThisDeviceOnlyItemKeepsItsPlace() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            _ = try devices[1].store.add(
                genericPassword(account: "alice", service: "svc", ["sync": .bool(true), "pdmn": .string("aku"), "v_Data": .utf8("device only")]),
                caller: devices[1].keychain.caller)
            try add(devices, 0, account: "alice", secret: "synced")
            try await devices.converge()
            #expect(try devices.items(1) == ["genp | alice | svc | - | - | device only"])
            #expect(try devices.items(0) == ["genp | alice | svc | - | - | synced"])
            #expect(try devices[1].store.pendingSyncChanges(limit: 10).isEmpty, "no deletion queued for the received item")
        }
    }

    /// Random adds, changes and deletes on three devices, some offline, with syncs between;
    /// after healing every device holds the same items (seeded, repeatable).
    @Test(arguments: 0..<20) func randomOperationsConverge(seed: UInt64) async throws {
        try await SyncedDevices.with(count: 3) { devices in
        var random = SplitMix64(seed: seed)
        let accounts = ["a", "b", "c", "d", "e"]
        for step in 0..<200 {
            let index = Int(random.next() % 3)
            let device = devices[index]
            let account = accounts[Int(random.next() % UInt64(accounts.count))]
            switch random.next() % 10 {
            case 0...2:
                _ = try? device.store.add(
                    genericPassword(account: account, service: "svc", ["sync": .bool(true), "v_Data": .utf8("secret \(step)"), "labl": .string("label \(step)")]),
                    caller: device.keychain.caller)
            case 3...5:
                try? update(devices, index, account: account, random.next() % 2 == 0 ? ["labl": .string("label \(step)")] : ["v_Data": .utf8("secret \(step)")])
            case 6:
                try? device.store.delete(genericPassword(account: account, ["sync": .bool(true)]), caller: device.keychain.caller)
            case 7:
                device.transport.offline.toggle()
            default:
                if !device.transport.offline { try await devices.sync(index) }
            }
        }
        for device in devices.devices { device.transport.offline = false }
        try await devices.converge(rounds: 10)
        let items = try (0..<3).map { try devices.items($0) }
        #expect(items[1] == items[0] && items[2] == items[0], "seed \(seed): \(items)")
        for device in devices.devices {
            #expect(try device.store.pendingSyncChanges(limit: 10).isEmpty, "seed \(seed): \(device.id) has unsent changes")
        }
        #expect(devices.logs.withLock { $0 }.filter { $0.contains("refused record") }.isEmpty, "seed \(seed)")
        let totals = devices.totals.withLock { $0 }
        #expect(totals.sent > 0 && totals.received > 0 && totals.refused == 0, "seed \(seed): \(totals)")
        print("sync: seed \(seed) | \(items[0].count) items on each device | sent \(totals.sent), received \(totals.received), merges that lost a value \(totals.conflicts)")
        }
    }
}

/// A server that lies: what it changes in a record is refused and logged, nothing of it is
/// applied, and the device's items are as they were.
@Suite struct LyingServerTests {
    /// Passes the feed through `tamper` before the device sees it.
    final class TamperingTransport: SyncZoneTransport, @unchecked Sendable {
        let inner: InProcessTransport
        let tamper: @Sendable ([SyncRecord]) -> [SyncRecord]
        init(_ inner: InProcessTransport, tamper: @escaping @Sendable ([SyncRecord]) -> [SyncRecord]) {
            self.inner = inner
            self.tamper = tamper
        }
        func apply(_ writes: [SyncRecord], zone: SyncIdentifier) async throws -> [Int64] { try await inner.apply(writes, zone: zone) }
        func changes(zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse {
            var page = try await inner.changes(zone: zone, after: after, limit: limit)
            page.records = tamper(page.records)
            return page
        }
    }

    static let lies: [(String, @Sendable ([SyncRecord]) -> [SyncRecord])] = [
        ("a flipped byte", { $0.map { var r = $0; r.body[r.body.count / 2] ^= 1; return r } }),
        ("a truncated body", { $0.map { var r = $0; r.body = r.body.prefix(r.body.count - 10); return r } }),
        ("another record's id", { $0.map { var r = $0; r.record = SyncIdentifier("00000000-0000-4000-8000-000000000000")!; return r } }),
        ("a flipped tombstone flag", { $0.map { var r = $0; r.tombstone.toggle(); return r } }),
        ("a version not the one sealed", { $0.map { var r = $0; r.version += 1; return r } }),
        ("garbage", { $0.map { var r = $0; r.body = Data(repeating: 0x41, count: 300); return r } }),
    ]

    @Test(arguments: 0..<lies.count) func aTamperedRecordIsRefusedAndNothingApplied(lie: Int) async throws {
        let (what, tamper) = Self.lies[lie]
        try await SyncedDevices.with(count: 2) { devices in
            let writer = devices[0]
            _ = try writer.store.add(genericPassword(account: "alice", service: "svc", ["sync": .bool(true), "v_Data": .utf8("original")]), caller: writer.keychain.caller)
            try await devices.converge()
            let before = try devices.items(1)
            try writer.store.update(genericPassword(account: "alice", ["sync": .bool(true)]), attributes: ["v_Data": .utf8("changed")], caller: writer.keychain.caller)
            try await devices.sync(0)

            let reader = devices[1]
            let liar = TamperingTransport(reader.transport, tamper: tamper)
            let engine = try KeychainSyncEngine(store: reader.store, sealer: reader.engine.sealerForTests, transport: liar, device: reader.id, zone: SyncedDevices.zone)
            let report = try await engine.sync()
            #expect(report.refused == 1 && report.received == 0, "\(what): \(report)")
            #expect(try devices.items(1) == before, "\(what): nothing applied")
        }
    }

    @Test func aVersionLowerThanOneSeenIsRefused() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            let writer = devices[0]
            _ = try writer.store.add(genericPassword(account: "alice", service: "svc", ["sync": .bool(true), "v_Data": .utf8("v1")]), caller: writer.keychain.caller)
            try await devices.converge()
            let first = try await devices[1].transport.changes(zone: SyncedDevices.zone, after: 0, limit: 10).records
            try writer.store.update(genericPassword(account: "alice", ["sync": .bool(true)]), attributes: ["v_Data": .utf8("v2")], caller: writer.keychain.caller)
            try await devices.converge()
            let current = try devices.items(1)
            #expect(current.first?.hasSuffix("v2") == true)

            // The server replays version 1 as new.
            let reader = devices[1]
            let replay = TamperingTransport(reader.transport) { records in records.isEmpty ? first : records }
            let engine = try KeychainSyncEngine(store: reader.store, sealer: reader.engine.sealerForTests, transport: replay, device: reader.id, zone: SyncedDevices.zone)
            let report = try await engine.sync()
            #expect(report.refused == 1 && report.received == 0, "\(report)")
            #expect(try devices.items(1) == current)
        }
    }
}
