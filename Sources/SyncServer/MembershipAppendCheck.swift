import Foundation
import SyncCrypto
import SyncProtocol

/// What the server checks of a membership entry before it stores it: the same rules every
/// device applies (``MembershipState``), which need no key to anything — a well-formed entry
/// of this account, at the end of the chain's verified part, linked to its head, signed by a
/// current member. The server still reads no record; it only refuses what no member signed,
/// so one stolen credential cannot append garbage that halts every device's round.
///
/// Entries stored before the server checked (or written to its database behind its back)
/// that do not verify are the chain's unverified tail: an append at the end of the verified
/// part replaces them, so a device acting on the chain it verified is never locked out by them.
struct MembershipAppendCheck {
    /// The chain as verified from its genesis, nil while it has none.
    var state: MembershipState?
    /// Entries stored past the verified part (0 when every stored entry verifies).
    var unverifiedTail: Int

    /// The longest verified prefix of `stored` (in index order).
    init(account: SyncIdentifier, stored: [MembershipEntry]) {
        var state: MembershipState?
        var verified = 0
        for entry in stored {
            guard entry.index == Int64(verified), let record = try? MembershipRecord(decoding: entry.entry), record.account == account else { break }
            if var next = state {
                guard (try? next.append(record)) != nil else { break }
                state = next
            } else {
                guard let genesis = try? MembershipState(genesis: record) else { break }
                state = genesis
            }
            verified += 1
        }
        self.state = state
        self.unverifiedTail = stored.count - verified
    }

    /// The verified part's length: where the next entry goes.
    var length: Int64 { state?.pin.length ?? 0 }

    /// Refuses `entry` unless it extends the verified chain: `.membershipIndex` when it is not
    /// at the verified part's end (another device appended first, or it follows an entry that
    /// does not verify), `.invalid` when it is not a well-formed entry of this account signed
    /// by a current member and linked to the head.
    func check(_ entry: MembershipEntry, account: SyncIdentifier) throws {
        guard entry.index == length else {
            throw SyncStoreError(.membershipIndex, "the chain has \(length) verified entries; an append must be at index \(length), not \(entry.index)")
        }
        do throws(SyncCryptoError) {
            let record = try MembershipRecord(decoding: entry.entry)
            guard record.account == account else { throw SyncCryptoError(.membership, "an entry of another account's chain") }
            if var state {
                try state.append(record)
            } else {
                _ = try MembershipState(genesis: record)
            }
        } catch {
            throw SyncStoreError(.invalid, "not a membership entry a member of this account signed at the chain's end: \(error.message)")
        }
    }
}
