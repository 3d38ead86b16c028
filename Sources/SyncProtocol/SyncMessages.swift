import FoundationEssentials

/// The JSON bodies of trousseau-syncd's HTTP API (`/v1/...`), shared by the server and the
/// devices. Every field is bounded by ``SyncLimits``; the server checks each again.

/// `POST /v1/accounts`: a device opens an account and becomes its first device. The token
/// is the device's credential, random and made by the device; the server keeps its SHA-256.
public struct RegisterAccountRequest: Codable, Sendable {
    public var account: SyncIdentifier
    public var device: SyncIdentifier
    public var token: Data

    public init(account: SyncIdentifier, device: SyncIdentifier, token: Data) {
        self.account = account
        self.device = device
        self.token = token
    }
}

/// `POST /v1/devices`: a device of the account gives the server another device's credential
/// (at the end of a join). The membership chain, not this list, says whom devices trust.
public struct RegisterDeviceRequest: Codable, Sendable {
    public var device: SyncIdentifier
    public var token: Data

    public init(device: SyncIdentifier, token: Data) {
        self.device = device
        self.token = token
    }
}

/// `POST /v1/zones/{zone}/batch`: writes applied all together or not at all. Each write's
/// `version` must be one more than the version the server holds (1 for a new record).
public struct BatchRequest: Codable, Sendable {
    public var writes: [SyncRecord]

    public init(writes: [SyncRecord]) {
        self.writes = writes
    }
}

/// The answer to an applied batch: the feed position each write took, in the batch's order.
public struct BatchResponse: Codable, Sendable, Equatable {
    public var seqs: [Int64]

    public init(seqs: [Int64]) {
        self.seqs = seqs
    }
}

/// The answer to a refused batch (HTTP 409): for each write whose condition failed, the
/// version the server holds (0: none). Nothing of the batch was applied.
public struct BatchConflict: Codable, Sendable, Equatable, Error {
    public struct Record: Codable, Sendable, Equatable {
        public var record: SyncIdentifier
        public var serverVersion: Int64

        public init(record: SyncIdentifier, serverVersion: Int64) {
            self.record = record
            self.serverVersion = serverVersion
        }
    }

    public var conflicts: [Record]

    public init(conflicts: [Record]) {
        self.conflicts = conflicts
    }
}

/// `GET /v1/zones/{zone}/changes?after=S&limit=N`: the zone's records written after `S`,
/// in feed order, each at its latest version (tombstones included).
public struct ChangesResponse: Codable, Sendable, Equatable {
    public var records: [SyncRecord]
    /// The feed position to ask after next time.
    public var high: Int64
    /// More records follow `high`.
    public var more: Bool

    public init(records: [SyncRecord], high: Int64, more: Bool) {
        self.records = records
        self.high = high
        self.more = more
    }
}

/// One entry of the account's membership chain, opaque to the server (signed and hash-linked
/// by the devices). `POST /v1/membership` appends at `index`, which must be the chain's length.
public struct MembershipEntry: Codable, Sendable, Equatable {
    public var index: Int64
    public var entry: Data

    public init(index: Int64, entry: Data) {
        self.index = index
        self.entry = entry
    }
}

/// `GET /v1/membership?after=I&limit=N`: the chain's entries from index `I + 1`, in order, at
/// most ``SyncLimits/membershipPage`` of them.
public struct MembershipResponse: Codable, Sendable, Equatable {
    public var entries: [MembershipEntry]
    /// More entries follow the last one: ask again after its index. Absent from a server that
    /// answered with the whole chain at once (before pages), so it decodes as false.
    public var more: Bool

    public init(entries: [MembershipEntry], more: Bool = false) {
        self.entries = entries
        self.more = more
    }

    private enum CodingKeys: String, CodingKey {
        case entries, more
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entries = try container.decode([MembershipEntry].self, forKey: .entries)
        more = try container.decodeIfPresent(Bool.self, forKey: .more) ?? false
    }
}

extension SyncLimits {
    /// Entries an account's membership chain may reach by adds: each pairing adds one, a
    /// recovery key one, each removal one, so a circle of a few devices over many years stays
    /// far below it. Past it only removals are taken (a lost device can always be removed),
    /// and they are bounded too: each removes a member some earlier entry added.
    public static let membershipChain = 256
    /// Entries in one page of `GET /v1/membership` (about 1.4 KB each as devices sign them).
    public static let membershipPage = 64
    /// Devices one account may hold credentials for at once (a revoked device frees its place).
    public static let devicesPerAccount = 64
}

/// A message on `GET /v1/notify` (a WebSocket): something of the account changed; the device
/// pulls to learn what. A hint carries no record and may be lost or repeated — a device that
/// reconnects pulls anyway — so correctness never rests on it.
public struct ChangeHint: Codable, Sendable, Equatable {
    /// The zone whose feed grew, or nil for the membership chain.
    public var zone: SyncIdentifier?
    /// The zone's feed position after the write, or the chain's new last index.
    public var seq: Int64

    public init(zone: SyncIdentifier?, seq: Int64) {
        self.zone = zone
        self.seq = seq
    }

    /// The socket's first message: it is subscribed. A device pulls after this, not after
    /// connecting, so no write between its pull and its subscription goes unhinted.
    public static let subscribed = ChangeHint(zone: nil, seq: -1)
}

/// An error body: a code a program can test and a message for people.
public struct SyncErrorBody: Codable, Sendable, Equatable {
    public var error: String
    public var message: String

    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }
}
