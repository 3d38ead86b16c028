import FoundationEssentials
import SyncProtocol

/// Where a device's verified chain ends: its length and the last entry's hash. A device
/// keeps its pin and accepts only chains that extend it; a joining device gets its first pin
/// over the authenticated join channel, never from the server.
public struct MembershipPin: Sendable, Equatable, Codable {
    public var length: Int64
    public var head: Data

    public init(length: Int64, head: Data) {
        self.length = length
        self.head = head
    }
}

/// A device the chain removed: its keys (its records written before stay verifiable), the
/// index of the entry that removed it, and the member that signed that entry (the one whose
/// key pointer may follow it).
public struct MembershipRemoval: Sendable, Equatable {
    public var keys: SyncDevicePublicKeys
    public var index: Int64
    public var signer: SyncIdentifier

    public init(keys: SyncDevicePublicKeys, index: Int64, signer: SyncIdentifier) {
        self.keys = keys
        self.index = index
        self.signer = signer
    }
}

/// An account's membership as its verified chain says: who the members are and their keys.
/// The server is never the authority: every entry is checked here against the entries
/// before it, and a device moves only forward from its pin.
///
/// The rules, each entry in order:
/// - entry 0 is a genesis whose signer is the device it founds, signed by that device;
/// - entry `n` has index `n`, names the hash of entry `n − 1`, and is signed by a member;
/// - an add names a device id never seen in the chain (ids are not reused, so a removed
///   device cannot come back under its old keys); a remove names a current member and
///   leaves at least one.
public struct MembershipState: Sendable, Equatable {
    public let account: SyncIdentifier
    /// The current members by device id.
    public private(set) var members: [SyncIdentifier: SyncDevicePublicKeys]
    /// Every device id the chain has named.
    public private(set) var named: Set<SyncIdentifier>
    /// The devices the chain removed, each with its keys and the index of the entry that
    /// removed it.
    public private(set) var removed: [SyncIdentifier: MembershipRemoval] = [:]
    public private(set) var pin: MembershipPin

    /// The chain's newest removal, if any: keys made before it may be held by the device it
    /// removed.
    public var newestRemoval: MembershipRemoval? { removed.values.max { $0.index < $1.index } }

    /// The state after the chain's first entry.
    public init(genesis record: MembershipRecord) throws(SyncCryptoError) {
        guard record.index == 0, record.previous == MembershipRecord.genesisPrevious, case .genesis(let founder) = record.operation else {
            throw SyncCryptoError(.membership, "the chain does not start with a genesis entry")
        }
        guard record.signer == founder.device, record.isSigned(by: founder.signing) else {
            throw SyncCryptoError(.badSignature, "the genesis entry is not signed by the device it founds")
        }
        account = record.account
        members = [founder.device: founder]
        named = [founder.device]
        pin = MembershipPin(length: 1, head: record.hash)
    }

    /// Verifies a whole chain from its genesis and checks that it passes through `pin` (the
    /// head a joining device was given, or one it kept): a chain that does not is a fork.
    public static func verify(_ chain: [MembershipRecord], account: SyncIdentifier, through pin: MembershipPin) throws(SyncCryptoError) -> MembershipState {
        guard let first = chain.first else { throw SyncCryptoError(.membership, "the chain is empty") }
        var state = try MembershipState(genesis: first)
        guard state.account == account else { throw SyncCryptoError(.membership, "the chain is another account's") }
        var passed = pin == state.pin
        for record in chain.dropFirst() {
            try state.append(record)
            passed = passed || pin == state.pin
        }
        guard passed else {
            throw SyncCryptoError(.fork, "the chain does not pass through the pinned head (length \(pin.length))")
        }
        return state
    }

    /// Applies the entries that follow the pin (as `GET /v1/membership?after=` returns them),
    /// all or none: on any refusal the state is unchanged.
    public mutating func extend(with records: [MembershipRecord]) throws(SyncCryptoError) {
        var next = self
        for record in records { try next.append(record) }
        self = next
    }

    /// Applies one entry that must follow the pin.
    public mutating func append(_ record: MembershipRecord) throws(SyncCryptoError) {
        guard record.account == account else { throw SyncCryptoError(.membership, "an entry of another account's chain") }
        guard record.index == pin.length else {
            throw SyncCryptoError(record.index < pin.length ? .fork : .membership, "entry \(record.index) does not follow entry \(pin.length - 1)")
        }
        guard record.previous == pin.head else {
            throw SyncCryptoError(.fork, "entry \(record.index) does not follow the pinned head: the chain was forked")
        }
        guard let signer = members[record.signer] else {
            throw SyncCryptoError(.unknownWriter, "entry \(record.index) is signed by a device that is not a member")
        }
        guard record.isSigned(by: signer.signing) else {
            throw SyncCryptoError(.badSignature, "entry \(record.index)'s signature does not verify")
        }
        switch record.operation {
        case .genesis:
            throw SyncCryptoError(.membership, "a second genesis entry")
        case .add(let keys):
            guard !named.contains(keys.device) else {
                throw SyncCryptoError(.membership, "entry \(record.index) adds a device id the chain already named")
            }
            members[keys.device] = keys
            named.insert(keys.device)
        case .remove(let device):
            guard members[device] != nil else { throw SyncCryptoError(.membership, "entry \(record.index) removes a device that is not a member") }
            guard members.count > 1 else { throw SyncCryptoError(.membership, "entry \(record.index) would remove the last member") }
            removed[device] = MembershipRemoval(keys: members[device]!, index: record.index, signer: record.signer)
            members[device] = nil
        }
        pin = MembershipPin(length: pin.length + 1, head: record.hash)
    }

    /// The next entry, unsigned, for `signer` to sign in its enclave.
    public func unsigned(_ operation: MembershipOperation, signer: SyncIdentifier) -> MembershipRecord {
        MembershipRecord.unsigned(account: account, index: pin.length, previous: pin.head, operation: operation, signer: signer)
    }

    /// The next entry this device would sign: at the pin's length, linked to its head.
    public func sign(_ operation: MembershipOperation, by signer: SyncDeviceKeys) throws -> MembershipRecord {
        try MembershipRecord.sign(account: account, index: pin.length, previous: pin.head, operation: operation, signer: signer)
    }
}
