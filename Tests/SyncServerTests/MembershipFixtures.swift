import Foundation
import SyncProtocol
@testable import SyncServer

extension SyncStore {
    /// The whole chain from index `after + 1`, read page by page as a device reads it.
    func membership(account: SyncIdentifier, after: Int64) async throws -> [MembershipEntry] {
        var entries: [MembershipEntry] = []
        var cursor = after
        while true {
            let page = try await membership(account: account, after: cursor, limit: SyncLimits.membershipPage)
            entries += page.entries
            guard page.more, let last = page.entries.last, last.index > cursor else { return entries }
            cursor = last.index
        }
    }
}

extension SignedChain {
    /// A chain of `count` entries: the genesis, then adds of `m1`, `m2`… signed by the founder.
    static func grown(account: SyncIdentifier, founder: SyncIdentifier = id("d1"), to count: Int) throws -> SignedChain {
        var chain = try SignedChain(account: account, founder: founder)
        for n in 1..<max(1, count) { try chain.add("m\(n)") }
        return chain
    }
}

extension SQLSyncStore {
    /// Writes `entries` into the account's chain as they are, without the store's checks: a
    /// long chain set up in a few statements, where appending it entry by entry would verify
    /// the chain from its genesis at each (the appends a test is about go through the store).
    func unsafeInsertMembership(_ entries: [MembershipEntry], account: SyncIdentifier) async throws {
        for start in stride(from: 0, to: entries.count, by: 32) {
            let rows = entries[start..<min(start + 32, entries.count)].map { entry in
                let bytes = dialect == .postgres ? "'\\x\(Self.hex(entry.entry))'::bytea" : "X'\(Self.hex(entry.entry))'"
                return "('\(account.rawValue)', \(entry.index), \(bytes))"
            }
            try await unsafeExecute("INSERT INTO membership (account_id, idx, entry) VALUES " + rows.joined(separator: ", "))
        }
    }

    private static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
