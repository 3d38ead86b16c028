import FoundationEssentials
import KeychainModel
import KeychainStore
@testable import KeychainSync
import KeychainTestSupport
import SyncCrypto
import SyncProtocol
import Testing

/// What a device had been given at a feed position, rebuilt from its view (the record
/// versions it was given, with their positions): the root a head is compared with — or
/// nothing, where a version in between is unknown and a comparison would be a guess.
@Suite struct SyncViewTests {
    static func hash(_ byte: UInt8) -> Data { Data(repeating: byte, count: 32) }

    func withEngine(_ body: (KeychainSyncEngine, KeychainStore) throws -> Void) async throws {
        try await SyncedDevices.with(count: 1) { devices in
            let device = devices[0]
            let engine = try KeychainSyncEngine(
                store: device.keychain.store, sealer: device.engine.sealerForTests, transport: device.transport, device: device.id,
                zone: SyncedDevices.zone, chain: [Self.hash(9)])
            try body(engine, device.keychain.store)
        }
    }

    func rows(_ store: KeychainStore, _ rows: [(String, Int64, Int64, UInt8)]) throws {
        try store.recordSyncView(
            zone: SyncedDevices.zone.rawValue, rows.map { SyncViewRow(record: $0.0, version: $0.1, seq: $0.2, hash: Self.hash($0.3)) })
    }

    func root(_ entries: [(String, Int64, UInt8)]) -> Data {
        SyncHead.root(entries.map { SyncViewEntry(record: $0.0, version: $0.1, hash: Self.hash($0.2)) })
    }

    @Test func theViewAtAPositionHoldsEachRecordsVersionThen() async throws {
        try await withEngine { engine, store in
            try rows(store, [("b", 1, 1, 1), ("b", 2, 5, 2), ("a", 1, 3, 3), ("c", 1, 7, 4)])
            #expect(try engine.root(at: 4) == root([("a", 1, 3), ("b", 1, 1)]), "c came later; b's second version too")
            #expect(try engine.root(at: 5) == root([("a", 1, 3), ("b", 2, 2)]))
            #expect(try engine.root(at: 7) == root([("a", 1, 3), ("b", 2, 2), ("c", 1, 4)]))
            #expect(try engine.root(at: 7) != root([("a", 1, 3), ("b", 2, 2)]), "a record left out changes the root")
        }
    }

    @Test func aVersionInBetweenThatNobodyHereWasGivenLeavesThePositionUnknown() async throws {
        try await withEngine { engine, store in
            // b given at version 1 (position 1), then at version 3 (position 9): version 2's
            // position is unknown, so what held at 5 is too.
            try rows(store, [("b", 1, 1, 1), ("b", 3, 9, 3)])
            #expect(try engine.root(at: 5) == nil)
            #expect(try engine.root(at: 9) == root([("b", 3, 3)]), "at 9 it is known again")
            // A record first given at version 4 (position 12): unknown before it.
            try rows(store, [("d", 4, 12, 4)])
            #expect(try engine.root(at: 10) == nil)
            #expect(try engine.root(at: 12) == root([("b", 3, 3), ("d", 4, 4)]))
        }
    }

    @Test func anOlderVersionIsNotKeptAndTheSameOneKeepsItsFirstPosition() async throws {
        try await withEngine { engine, store in
            try rows(store, [("b", 1, 1, 1), ("b", 2, 5, 2)])
            try rows(store, [("b", 1, 20, 1)])  // replayed at a later position: not kept
            try rows(store, [("b", 2, 30, 2)])  // the same body again: keeps position 5
            #expect(try engine.root(at: 6) == root([("b", 2, 2)]))
            try rows(store, [("b", 2, 31, 7)])  // another body for version 2: replaces it
            #expect(try engine.root(at: 6) == root([("b", 1, 1)]), "version 2 is now at 31")
            #expect(try engine.root(at: 31) == root([("b", 2, 7)]))
        }
    }

    /// A head is written in the first round that may write one after the view changed, even
    /// when that round reads nothing itself: the records came in rounds that changes and hints
    /// started, which write no head.
    @Test func aHeadFollowsRecordsReadInRoundsThatWroteNone() async throws {
        try await SyncedDevices.with(count: 2) { devices in
            let engines = try (0..<2).map { index in
                try KeychainSyncEngine(
                    store: devices[index].keychain.store, sealer: devices[index].engine.sealerForTests, transport: devices[index].transport,
                    device: devices[index].id, zone: SyncedDevices.zone, chain: [Self.hash(9)])
            }
            func add(_ account: String) throws {
                _ = try devices[0].store.add(
                    genericPassword(account: account, service: "svc", ["sync": .bool(true), "v_Data": .utf8("secret")]), caller: devices[0].keychain.caller)
            }
            try add("first")
            _ = try await engines[0].sync()
            #expect(try await engines[1].sync().headsSent == 1, "the reader's first head")
            try add("second")
            _ = try await engines[0].sync()
            #expect(try await engines[1].sync(publishingHead: false).received == 1, "read in a round that writes no head")
            #expect(try await engines[1].sync().headsSent == 1, "the next round that may, reading nothing new, writes it")
            #expect(try await engines[1].sync().headsSent == 0, "and then no more")
        }
    }
}
