import Foundation
import SyncProtocol

/// What trousseau-syncd keeps: accounts, their devices' credentials, each zone's records and
/// change feed, and the membership chain — all opaque bytes under random ids. One protocol,
/// two back ends (``SQLSyncStore`` on SQLite and on PostgreSQL); `SyncStoreConformance` in the
/// tests holds both to the same behaviour.
public protocol SyncStore: Sendable {
    /// Opens an account with its first device. Throws `.accountExists` if the id is taken.
    func registerAccount(_ account: SyncIdentifier, device: SyncIdentifier, tokenHash: Data, quota: SyncQuota) async throws
    /// Adds a device's credential to an account. Throws `.deviceExists` if the id is taken,
    /// `.quotaExceeded` when the account holds ``SyncLimits/devicesPerAccount`` already.
    func registerDevice(_ device: SyncIdentifier, account: SyncIdentifier, tokenHash: Data) async throws
    /// Forgets a device's credential (a member removed it from the circle): its requests get
    /// 401 from then on. Throws `.noSuchDevice` unless the account has that device.
    func revokeDevice(_ device: SyncIdentifier, account: SyncIdentifier) async throws
    /// The device whose credential hashes to `tokenHash`, if any.
    func device(tokenHash: Data) async throws -> AuthenticatedDevice?
    /// Applies `writes` to a zone all together, or nothing: throws ``BatchConflict`` naming
    /// every write whose version is not one more than the server's, `.quotaExceeded` past the
    /// account's quota. Returns each write's feed position; positions follow commit order.
    func apply(_ writes: [SyncRecord], account: SyncIdentifier, zone: SyncIdentifier) async throws -> [Int64]
    /// The zone's records whose latest write came after `after`, in feed order, at most `limit`.
    func changes(account: SyncIdentifier, zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse
    /// Appends to the membership chain; throws `.membershipIndex` unless `entry.index` is the
    /// chain's length (two devices appending at once: one wins, the other reads and retries),
    /// `.quotaExceeded` for an add at ``SyncLimits/membershipChain`` or past it.
    func appendMembership(_ entry: MembershipEntry, account: SyncIdentifier) async throws
    /// The chain's entries from index `after + 1`, at most `limit` (clamped to 1 to
    /// ``SyncLimits/membershipPage``), and whether more follow.
    func membership(account: SyncIdentifier, after: Int64, limit: Int) async throws -> MembershipResponse
    /// Opens a pairing for `device` of `account` with the random id `pairing`, under a free
    /// nameplate drawn at random (so a stranger polling claims cannot count up to each new
    /// pairing); expired pairings are forgotten first. Throws `.tooManyPairings`
    /// past ``SyncLimits/pairingsPerAccount`` for the account or ``SyncLimits/pairings`` in all.
    func openPairing(account: SyncIdentifier, device: SyncIdentifier, pairing: SyncIdentifier, now: Int64) async throws -> PairingOpened
    /// The new device takes the pairing under `nameplate` with its token's hash, once:
    /// `.noSuchPairing` if none is open there, `.pairingClaimed` if it was claimed.
    func claimPairing(nameplate: Int64, tokenHash: Data, now: Int64) async throws -> PairingClaimed
    /// Posts a message from `party`'s side; returns its index. `.noSuchPairing` unless the
    /// party opened (member) or claimed (new device) this pairing and it is open;
    /// `.invalid` past ``SyncLimits/pairingMessages`` or ``SyncLimits/pairingMessage``.
    func postPairingMessage(nameplate: Int64, party: PairingParty, body: Data, now: Int64) async throws -> Int64
    /// The other side's messages after index `after`, for `party`.
    func pairingMessages(nameplate: Int64, party: PairingParty, after: Int64, now: Int64) async throws -> PairingMessages
    /// Ends the pairing and forgets its messages: the code is dead.
    func closePairing(nameplate: Int64, party: PairingParty, now: Int64) async throws
    /// The hints of writes to this store, by any instance sharing its database (``ChangeHints``).
    var hints: ChangeHints { get }
    /// Closes the database and ends every hint subscription.
    func close() async throws
}

/// A device the server has authenticated: a different type from an identifier a request names.
public struct AuthenticatedDevice: Sendable, Equatable {
    public let account: SyncIdentifier
    public let device: SyncIdentifier

    public init(account: SyncIdentifier, device: SyncIdentifier) {
        self.account = account
        self.device = device
    }
}

/// Who speaks in a pairing: the member that opened it, or the new device that claimed it.
public enum PairingParty: Sendable, Equatable {
    case member(AuthenticatedDevice)
    /// The SHA-256 of the token the new device claimed with.
    case newDevice(tokenHash: Data)

    /// The side the party writes (0 member, 1 new device); it reads the other.
    var side: Int64 {
        switch self {
        case .member: 0
        case .newDevice: 1
        }
    }
}

/// What one account may keep on the server.
public struct SyncQuota: Sendable, Equatable {
    public var records: Int64
    public var bytes: Int64

    public init(records: Int64, bytes: Int64) {
        self.records = records
        self.bytes = bytes
    }

    /// 50,000 records and 256 MiB: far beyond a keychain (Apple's are a few thousand items).
    public static let standard = SyncQuota(records: 50_000, bytes: 256 * 1024 * 1024)
}

/// A request the store refused. Equal on the code only.
public struct SyncStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public static let accountExists = Code(name: "account-exists")
        public static let deviceExists = Code(name: "device-exists")
        public static let noSuchAccount = Code(name: "no-such-account")
        public static let noSuchDevice = Code(name: "no-such-device")
        public static let quotaExceeded = Code(name: "quota-exceeded")
        public static let membershipIndex = Code(name: "membership-index")
        public static let noSuchPairing = Code(name: "no-such-pairing")
        public static let pairingClaimed = Code(name: "pairing-claimed")
        public static let tooManyPairings = Code(name: "too-many-pairings")
        public static let invalid = Code(name: "invalid")
        public static let schema = Code(name: "schema")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: SyncStoreError, rhs: SyncStoreError) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(message)" }
}
