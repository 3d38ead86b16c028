import Foundation
import SQLKit
import SyncProtocol

/// The pairing mailboxes in SQL (schema migration 2). An expired pairing is treated as absent
/// everywhere and deleted when the next pairing is opened.
extension SQLSyncStore {
    public func openPairing(account: SyncIdentifier, device: SyncIdentifier, pairing: SyncIdentifier, now: Int64) async throws -> PairingOpened {
        let dialect = self.dialect
        return try await transaction { db in
            if dialect == .postgres {
                // Nameplates are allocated across instances: one allocation at a time.
                try await db.raw("SELECT pg_advisory_xact_lock(7436592)").run()
            }
            let expired = try await db.raw("SELECT pairing_id FROM pairings WHERE expires_at <= \(bind: now)").all()
                .map { try $0.decode(column: "pairing_id", as: String.self) }
            if !expired.isEmpty {
                let ids: [any Encodable & Sendable] = expired
                try await db.raw("DELETE FROM pairing_messages WHERE pairing_id IN (\(binds: ids))").run()
                try await db.raw("DELETE FROM pairings WHERE pairing_id IN (\(binds: ids))").run()
            }
            let open = try await db.raw("SELECT nameplate, account_id FROM pairings").all().map {
                (try $0.decode(column: "nameplate", as: Int64.self), try $0.decode(column: "account_id", as: String.self))
            }
            guard open.filter({ $0.1 == account.rawValue }).count < SyncLimits.pairingsPerAccount, open.count < SyncLimits.pairings else {
                throw SyncStoreError(.tooManyPairings, "too many pairings are open; finish or close one")
            }
            // A free number drawn at random (the system's generator), not the smallest: a
            // stranger who claims the next small numbers as they open would take every pairing
            // (the right device then needs a new code); a random one must be guessed among
            // 9,999. Codes are up to three digits longer for it. No two transactions draw at
            // once (the lock above; BEGIN IMMEDIATE on SQLite), so the number stays free.
            let taken = Set(open.map { $0.0 })
            guard let nameplate = (1...Int64(SyncLimits.pairings)).filter({ !taken.contains($0) }).randomElement() else {
                throw SyncStoreError(.tooManyPairings, "too many pairings are open; finish or close one")
            }
            let expires = now + SyncLimits.pairingLifetime
            try await db.raw("""
                INSERT INTO pairings (nameplate, pairing_id, account_id, device_id, expires_at)
                VALUES (\(bind: nameplate), \(bind: pairing.rawValue), \(bind: account.rawValue), \(bind: device.rawValue), \(bind: expires))
                """).run()
            return PairingOpened(nameplate: nameplate, pairing: pairing, expires: expires)
        }
    }

    public func claimPairing(nameplate: Int64, tokenHash: Data, now: Int64) async throws -> PairingClaimed {
        try await transaction { db in
            // The condition and the claim in one statement: of two instances claiming at once,
            // one updates the row and the other finds it claimed.
            if let row = try await db.raw("""
                UPDATE pairings SET claim_hash = \(bind: tokenHash)
                WHERE nameplate = \(bind: nameplate) AND expires_at > \(bind: now) AND claim_hash IS NULL RETURNING pairing_id
                """).first() {
                guard let pairing = SyncIdentifier(try row.decode(column: "pairing_id", as: String.self)) else {
                    throw SyncStoreError(.schema, "a stored pairing id is ill-formed")
                }
                return PairingClaimed(pairing: pairing)
            }
            guard try await db.raw("SELECT 1 AS one FROM pairings WHERE nameplate = \(bind: nameplate) AND expires_at > \(bind: now)").first() != nil else {
                throw SyncStoreError(.noSuchPairing, "no pairing is open under this number")
            }
            throw SyncStoreError(.pairingClaimed, "this code was used already; ask for a new one")
        }
    }

    public func postPairingMessage(nameplate: Int64, party: PairingParty, body: Data, now: Int64) async throws -> Int64 {
        guard body.count <= SyncLimits.pairingMessage else {
            throw SyncStoreError(.invalid, "a pairing message is at most \(SyncLimits.pairingMessage) bytes")
        }
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        return try await transaction { db in
            // Locked: two posts of one side take distinct indices, and none lands after a close.
            let pairing = try await Self.pairing(nameplate, party: party, now: now, lock: lock, in: db)
            let count = try await db.raw("""
                SELECT COUNT(*) AS n FROM pairing_messages WHERE pairing_id = \(bind: pairing) AND side = \(bind: party.side)
                """).first()?.decode(column: "n", as: Int64.self) ?? 0
            guard count < SyncLimits.pairingMessages else {
                throw SyncStoreError(.invalid, "a side posts at most \(SyncLimits.pairingMessages) messages to a pairing")
            }
            try await db.raw("""
                INSERT INTO pairing_messages (pairing_id, side, idx, body) VALUES (\(bind: pairing), \(bind: party.side), \(bind: count), \(bind: body))
                """).run()
            return count
        }
    }

    public func pairingMessages(nameplate: Int64, party: PairingParty, after: Int64, now: Int64) async throws -> PairingMessages {
        try await read { db in
            let pairing = try await Self.pairing(nameplate, party: party, now: now, in: db)
            let rows = try await db.raw("""
                SELECT idx, body FROM pairing_messages
                WHERE pairing_id = \(bind: pairing) AND side = \(bind: 1 - party.side) AND idx > \(bind: after) ORDER BY idx
                """).all()
            return PairingMessages(messages: try rows.map {
                PairingMessage(index: try $0.decode(column: "idx", as: Int64.self), body: try $0.decode(column: "body", as: Data.self))
            })
        }
    }

    public func closePairing(nameplate: Int64, party: PairingParty, now: Int64) async throws {
        let lock = dialect == .postgres ? " FOR UPDATE" : ""
        try await transaction { db in
            let pairing = try await Self.pairing(nameplate, party: party, now: now, lock: lock, in: db)
            try await db.raw("DELETE FROM pairing_messages WHERE pairing_id = \(bind: pairing)").run()
            try await db.raw("DELETE FROM pairings WHERE pairing_id = \(bind: pairing)").run()
        }
    }

    /// The id of the open pairing under `nameplate` that `party` may speak in; a pairing of
    /// someone else's looks absent. `lock` is `FOR UPDATE` on PostgreSQL for a write.
    private static func pairing(_ nameplate: Int64, party: PairingParty, now: Int64, lock: String = "", in db: any SQLDatabase) async throws -> String {
        guard let row = try await db.raw("""
            SELECT pairing_id, account_id, device_id, claim_hash FROM pairings
            WHERE nameplate = \(bind: nameplate) AND expires_at > \(bind: now)\(unsafeRaw: lock)
            """).first()
        else { throw SyncStoreError(.noSuchPairing, "no pairing is open under this number") }
        let allowed: Bool =
            switch party {
            case .member(let caller):
                try row.decode(column: "account_id", as: String.self) == caller.account.rawValue
                    && row.decode(column: "device_id", as: String.self) == caller.device.rawValue
            case .newDevice(let tokenHash):
                try row.decode(column: "claim_hash", as: Data?.self) == tokenHash
            }
        guard allowed else { throw SyncStoreError(.noSuchPairing, "no pairing is open under this number") }
        return try row.decode(column: "pairing_id", as: String.self)
    }
}
