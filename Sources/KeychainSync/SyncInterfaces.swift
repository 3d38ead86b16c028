public import FoundationEssentials
public import KeychainModel
public import SyncCrypto
public import SyncProtocol

/// Seals and opens item records for the engine. In securityd it is the enclave, which holds
/// the sync keys; a test may use ``SyncRecordEnvelope`` with keys of its own (the same format).
public protocol SyncRecordSealing: Sendable {
    /// The record's body: `plaintext` sealed for `context` under the class key of `protection`.
    func seal(_ plaintext: SecretBytes, context: SyncRecordContext, protection: ProtectionClass) throws -> Data
    /// The plaintext of a body the server returned for `context`; throws for anything that
    /// does not open there (another record, zone or version, a writer who is not a member).
    func open(_ body: Data, context: SyncRecordContext) throws -> SecretBytes
    /// Takes a record of the zone's keys (a share, a class key, the key pointer): true when
    /// it changed the keys this sealer holds or uses. A test's sealer with fixed keys takes none.
    func receiveKey(_ record: SyncRecord, zone: SyncIdentifier) throws -> Bool
}

extension SyncRecordSealing {
    public func receiveKey(_ record: SyncRecord, zone: SyncIdentifier) throws -> Bool { false }
}

/// The server's zone API as the engine calls it: HTTP to trousseau-syncd, or a `SyncStore`
/// in process (the same calls the server's routes make).
public protocol SyncZoneTransport: Sendable {
    /// Applies the writes all together: the feed positions, or ``BatchConflict`` (nothing applied).
    func apply(_ writes: [SyncRecord], zone: SyncIdentifier) async throws -> [Int64]
    /// The zone's records written after `after`.
    func changes(zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse
}

/// What one round of sync did.
public struct SyncReport: Sendable, Equatable {
    /// Records received and applied (merged where this device had changed them too).
    public var received = 0
    /// Records received and refused (logged; nothing applied; read again next round).
    public var refused = 0
    /// The last refused record and why (the refusal's message names no value).
    public var lastRefusal: String?
    /// Records the server refused a write against at a version its feed had not given this
    /// device (found in a refused batch; the feed is then read again from its start).
    public var omitted = 0
    /// Local changes the server acknowledged.
    public var sent = 0
    /// Merges in which a concurrent value lost (kept in the history).
    public var conflicts = 0
    /// The highest feed position the server gave this device's writes in this round: its
    /// feed must reach it (``SyncService``'s stall warning).
    public var acknowledged: Int64?
    /// Key records taken (a zone key shared to this device, a class key, a new key pointer).
    public var keys = 0
    /// Heads of this device sent (each after a round that changed what it was given).
    public var headsSent = 0
    /// Other devices' heads compared with this device's view, and agreeing.
    public var headsAgreed = 0
    /// Changes that could not be read now (class A while locked) and stay queued.
    public var waiting = 0
    /// Why this round sent nothing though it may have had changes, when it held them: the
    /// zone's keys predate a removal in this device's chain.
    public var held: String?

    public init() {}
}
