import Foundation
import SyncCrypto
import SyncProtocol
@testable import SyncServer
import Testing

/// Issue 61: what one account may take of the server beyond its record quota — chain
/// entries, devices' credentials, a chain read in one answer, the pairing numbers others can
/// guess — held to the same bounds on both back ends.
extension SyncStoreConformanceTests {
    /// The chain grows by adds to ``SyncLimits/membershipChain`` entries; an add past it is
    /// refused as a full quota (507 on the wire), a removal still goes in (a full circle can
    /// still remove a lost device), and another account's chain is its own.
    @Test(arguments: Backend.available)
    func theChainStopsGrowingByAddsAtItsCapAndARemovalStillGoesIn(_ backend: Backend) async throws {
        let store = try await store(backend)
        let cap = SyncLimits.membershipChain
        var chain = try SignedChain.grown(account: alice, to: cap - 1)
        try await store.unsafeInsertMembership(chain.entries, account: alice)
        // The entry that fills the chain goes through every check an append does.
        try await store.appendMembership(try chain.add("last"), account: alice)
        #expect(try await store.membership(account: alice, after: -1).count == cap)

        await #expect(throws: SyncStoreError(.quotaExceeded, "")) { try await store.appendMembership(try chain.next(adding: "one-too-many"), account: alice) }
        // Not even when it claims another index, or is not an entry at all.
        await #expect(throws: SyncStoreError(.quotaExceeded, "")) {
            try await store.appendMembership(MembershipEntry(index: Int64(cap) + 5, entry: Data("x".utf8)), account: alice)
        }
        let removal = try chain.state.sign(.remove(id("m1")), by: chain.founder)
        try await store.appendMembership(MembershipEntry(index: removal.index, entry: removal.encoded), account: alice)
        #expect(try await store.membership(account: alice, after: -1).count == cap + 1)

        try await store.appendMembership(try SignedChain(account: bob).entries[0], account: bob)
        #expect(try await store.membership(account: bob, after: -1).count == 1)
        try await store.close()
    }

    /// An account holds at most ``SyncLimits/devicesPerAccount`` credentials at once; the next
    /// is refused as a full quota until one is revoked. Another account is not affected.
    @Test(arguments: Backend.available)
    func anAccountHoldsAtMostItsCapOfDevices(_ backend: Backend) async throws {
        let store = try await store(backend)
        func credential(_ n: Int) -> Data { Data([0xAA, UInt8(n >> 8), UInt8(n & 0xff)]) + Data(count: 29) }
        // d1, Alice's first device, holds one place.
        for n in 2...SyncLimits.devicesPerAccount {
            try await store.registerDevice(id("d\(n)"), account: alice, tokenHash: credential(n))
        }
        await #expect(throws: SyncStoreError(.quotaExceeded, "")) { try await store.registerDevice(id("d-extra"), account: alice, tokenHash: credential(999)) }
        #expect(try await store.device(tokenHash: credential(999)) == nil)
        try await store.registerDevice(id("b2"), account: bob, tokenHash: credential(1000))
        try await store.revokeDevice(id("d2"), account: alice)
        try await store.registerDevice(id("d-extra"), account: alice, tokenHash: credential(999))
        #expect(try await store.device(tokenHash: credential(999)) == AuthenticatedDevice(account: alice, device: id("d-extra")))
        try await store.close()
    }

    /// The chain is read in pages of at most ``SyncLimits/membershipPage`` entries, each
    /// saying whether more follow; a larger limit is the server's page, a smaller one is kept.
    @Test(arguments: Backend.available)
    func theChainIsReadInPages(_ backend: Backend) async throws {
        let store = try await store(backend)
        let page = SyncLimits.membershipPage
        let chain = try SignedChain.grown(account: alice, to: page + 6)
        try await store.unsafeInsertMembership(chain.entries, account: alice)

        let first = try await store.membership(account: alice, after: -1, limit: page)
        #expect(first.entries == Array(chain.entries.prefix(page)) && first.more)
        let second = try await store.membership(account: alice, after: try #require(first.entries.last).index, limit: page)
        #expect(second.entries == Array(chain.entries.dropFirst(page)) && !second.more)
        #expect(try await store.membership(account: alice, after: -1, limit: 100_000).entries.count == page)
        let small = try await store.membership(account: alice, after: 2, limit: 3)
        #expect(small.entries.map(\.index) == [3, 4, 5] && small.more)
        #expect(try await store.membership(account: alice, after: -1, limit: 0).entries.map(\.index) == [0])
        // The last entry alone: nothing follows it.
        let last = try await store.membership(account: alice, after: Int64(chain.entries.count - 2), limit: 1)
        #expect(last.entries.count == 1 && !last.more)
        #expect(try await store.membership(account: alice, after: -1) == chain.entries)
        #expect(try await store.membership(account: bob, after: -1, limit: page) == MembershipResponse(entries: [], more: false))
        try await store.close()
    }

    /// Nameplates are drawn at random among the free ones, not counted up from 1: a stranger
    /// claiming 1, 2, 3… as pairings open no longer takes each.
    @Test(arguments: Backend.available)
    func nameplatesAreDrawnAtRandomNotCountedUp(_ backend: Backend) async throws {
        let store = try await store(backend)
        var nameplates: [Int64] = []
        for a in 0..<3 {
            let account = id("account-n\(a)")
            try await store.registerAccount(account, device: id("d1"), tokenHash: tokenHash(UInt8(100 + a)), quota: .standard)
            for n in 0..<SyncLimits.pairingsPerAccount {
                nameplates.append(try await store.openPairing(account: account, device: id("d1"), pairing: id("p\(a)-\(n)"), now: 1).nameplate)
            }
        }
        #expect(Set(nameplates).count == nameplates.count)
        #expect(nameplates.allSatisfy { (1...Int64(SyncLimits.pairings)).contains($0) })
        // Counted up they would be 1…12; drawn from 9,999, all 12 at most 12 has odds of about 1e-40.
        #expect(nameplates.contains { $0 > Int64(nameplates.count) }, "\(nameplates)")
        try await store.close()
    }
}
