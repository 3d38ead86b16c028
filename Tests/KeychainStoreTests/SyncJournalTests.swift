import FoundationEssentials
import KeychainCallers
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

/// The outgoing sync queue a local change joins (migration v5): only items that may leave the
/// device, only while sync is enabled, one row per record, in the change's own transaction.
@Suite struct SyncJournalTests: KeychainSuite {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    func enable() throws {
        try store.enableSync(SyncAccountRecord(server: "https://sync.example", account: "acct", device: "dev", identity: Data([1, 2, 3])))
    }

    func pending() throws -> [SyncPendingChange] { try store.pendingSyncChanges(limit: 1000) }

    func uuid(_ query: [String: KeychainValue]) throws -> String {
        guard case .data(let reference)? = try store.copyMatching(query.merging(["r_PersistentRef": .bool(true)]) { $1 }, caller: caller) else {
            throw KeychainError.itemNotFound
        }
        return try PersistentReference(data: reference).uuid.uuidString.lowercased()
    }

    @Test func nothingIsQueuedWhileSyncIsOff() throws {
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        try store.update(genericPassword(account: "s", ["sync": .bool(true)]), attributes: ["labl": .string("L")], caller: caller)
        try store.delete(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        #expect(try pending().isEmpty)
        #expect(try store.syncAccount() == nil)
    }

    @Test func enablingQueuesTheItemsThatMaySyncAndNoOthers() throws {
        _ = try store.add(genericPassword(account: "synced", ["sync": .bool(true)]), caller: caller)
        _ = try store.add(["class": .string("inet"), "acct": .string("synced-inet"), "srvr": .string("example.com"), "sync": .bool(true)], caller: caller)
        _ = try store.add(genericPassword(account: "local"), caller: caller)
        _ = try store.add(genericPassword(account: "here-only", ["sync": .bool(true), "pdmn": .string("cku")]), caller: caller)
        _ = try store.add(genericPassword(account: "deleted", ["sync": .bool(true)]), caller: caller)
        try store.delete(genericPassword(account: "deleted", ["sync": .bool(true)]), caller: caller)

        try enable()
        let queued = try pending()
        #expect(Set(queued.map(\.record)) == [
            try uuid(genericPassword(account: "synced", ["sync": .bool(true)])),
            try uuid(["class": .string("inet"), "acct": .string("synced-inet"), "sync": .bool(true)]),
        ])
        #expect(queued.allSatisfy { !$0.tombstone && $0.attempts == 0 })
        #expect(Set(queued.map(\.itemClass)) == [.genericPassword, .internetPassword])
        #expect(osStatus { try enable() } == OSStatusCode.duplicateItem, "enabled once")
    }

    @Test func addUpdateAndDeleteKeepOneRowPerRecordWithAGrowingClock() throws {
        try enable()
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true), "v_Data": .utf8("1")]), caller: caller)
        let record = try uuid(genericPassword(account: "s", ["sync": .bool(true)]))
        let added = try #require(try pending().first)
        #expect(added.record == record && !added.tombstone)

        // A change moving the item off its primary key is the same record.
        try store.update(genericPassword(account: "s", ["sync": .bool(true)]), attributes: ["acct": .string("t")], caller: caller)
        let updated = try #require(try pending().first)
        #expect(try pending().count == 1 && updated.record == record && !updated.tombstone)
        #expect(updated.clock > added.clock)

        try store.delete(genericPassword(account: "t", ["sync": .bool(true)]), caller: caller)
        let deleted = try #require(try pending().first)
        #expect(try pending().count == 1 && deleted.record == record && deleted.tombstone)
        #expect(deleted.clock > updated.clock)
        #expect(try store.syncAccount()?.clock == deleted.clock, "the account keeps the last value issued")
    }

    @Test func anItemLeavingSyncIsATombstoneAndOneJoiningIsAnUpsert() throws {
        try enable()
        _ = try store.add(genericPassword(account: "a", ["sync": .bool(true)]), caller: caller)
        let a = try uuid(genericPassword(account: "a", ["sync": .bool(true)]))
        try store.update(genericPassword(account: "a", ["sync": .bool(true)]), attributes: ["sync": .bool(false)], caller: caller)
        #expect(try pending().map { [$0.record, "\($0.tombstone)"] } == [[a, "true"]])

        _ = try store.add(genericPassword(account: "b"), caller: caller)
        #expect(try pending().count == 1, "a local item is not queued")
        let b = try uuid(genericPassword(account: "b"))
        try store.update(genericPassword(account: "b"), attributes: ["sync": .bool(true)], caller: caller)
        #expect(try pending().first { $0.record == b }?.tombstone == false)

        // ThisDeviceOnly is not for sync, whatever kSecAttrSynchronizable says.
        try store.update(genericPassword(account: "b", ["sync": .bool(true)]), attributes: ["pdmn": .string("aku")], caller: caller)
        #expect(try pending().first { $0.record == b }?.tombstone == true)
    }

    @Test func aDeleteWithoutATombstoneHereStillSyncs() throws {
        try enable()
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true)]), caller: caller)
        try store.delete(genericPassword(account: "s", ["sync": .bool(true), "u_Tomb": .bool(false)]), caller: caller)
        #expect(try pending().map(\.tombstone) == [true])
    }

    @Test func aFailedChangeQueuesNothing() throws {
        try enable()
        _ = try store.add(genericPassword(account: "a", ["sync": .bool(true)]), caller: caller)
        _ = try store.add(genericPassword(account: "b", ["sync": .bool(true)]), caller: caller)
        let before = try pending()
        // Renaming b to a collides: the transaction, queue row included, is rolled back.
        #expect(osStatus { try store.update(genericPassword(account: "b", ["sync": .bool(true)]), attributes: ["acct": .string("a")], caller: caller) } == OSStatusCode.duplicateItem)
        #expect(try pending() == before)
    }

    @Test func disablingForgetsTheQueueAndKeepsTheItems() throws {
        try enable()
        _ = try store.add(genericPassword(account: "s", ["sync": .bool(true), "v_Data": .utf8("kept")]), caller: caller)
        try store.disableSync()
        #expect(try store.syncAccount() == nil && pending().isEmpty)
        #expect(try store.copyMatching(genericPassword(account: "s", ["sync": .bool(true), "r_Data": .bool(true)]), caller: caller) == .utf8("kept"))
        try enable()
        #expect(try pending().count == 1, "enabling again re-sends it")
    }

    @Test func reservedGroupsAndSecretServiceCollectionsNeverSync() {
        #expect(AccessGroups.maySync("com.example.app"))
        #expect(AccessGroups.maySync(Caller.securityToolGroup))
        for group in AccessGroups.DaemonGroup.allCases.map(\.rawValue) + [AccessGroups.profileItemGroupPrefix + "com.example.profile", "unsigned.0123/collection/scratch"] {
            #expect(!AccessGroups.maySync(group), "\(group)")
        }
    }
}
