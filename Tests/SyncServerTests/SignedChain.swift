import Foundation
import SyncCrypto
import SyncProtocol

/// A real membership chain for tests of the server's store and routes, which take only
/// entries a member signed at the chain's end: a genesis, then adds signed by the founder.
struct SignedChain {
    let founder: SyncDeviceKeys
    private(set) var state: MembershipState
    /// The entries made so far, in order.
    private(set) var entries: [MembershipEntry]

    init(account: SyncIdentifier, founder device: SyncIdentifier = id("d1")) throws {
        founder = try SyncDeviceKeys.generate(device: device)
        let genesis = try MembershipRecord.genesis(account: account, founder: founder)
        state = try MembershipState(genesis: genesis)
        entries = [MembershipEntry(index: 0, entry: genesis.encoded)]
    }

    /// The next entry, adding `device`, signed by the founder (not yet kept: a fork's, or one
    /// a test sends before ``add(_:)`` keeps it).
    func next(adding device: String) throws -> MembershipEntry {
        let record = try state.sign(.add(try SyncDeviceKeys.generate(device: id(device)).publicKeys), by: founder)
        return MembershipEntry(index: record.index, entry: record.encoded)
    }

    /// Makes the next entry, adding `device`, and keeps it.
    @discardableResult
    mutating func add(_ device: String) throws -> MembershipEntry {
        let entry = try next(adding: device)
        try state.append(try MembershipRecord(decoding: entry.entry))
        entries.append(entry)
        return entry
    }
}
