import FoundationEssentials

/// The pairing mailbox: how a new device and a member of the account reach each other
/// through the server to run the join exchange (CPace, then sealed messages), without the
/// server learning the code or what they say. A member opens a pairing under a small
/// number, the nameplate, which begins the code it shows; the new device claims the pairing
/// once with a random token; each side posts opaque messages that the other reads.

/// `POST /v1/pairings` (a member's credential): the pairing opened.
public struct PairingOpened: Codable, Sendable, Equatable {
    /// The code's first part: a number of at most four digits, drawn at random among those no
    /// open pairing of the server holds.
    public var nameplate: Int64
    /// The pairing's random id: the join exchange's session id.
    public var pairing: SyncIdentifier
    /// When the server forgets it (seconds since 1970).
    public var expires: Int64

    public init(nameplate: Int64, pairing: SyncIdentifier, expires: Int64) {
        self.nameplate = nameplate
        self.pairing = pairing
        self.expires = expires
    }
}

/// `POST /v1/pairings/{nameplate}/claim` (no credential): the new device takes the pairing,
/// once. Its later requests carry the token (`Authorization: Pairing <base64>`); the server
/// keeps its SHA-256.
public struct PairingClaim: Codable, Sendable {
    public var token: Data

    public init(token: Data) {
        self.token = token
    }
}

/// The answer to a claim: the pairing's id (the session id both sides bind).
public struct PairingClaimed: Codable, Sendable, Equatable {
    public var pairing: SyncIdentifier

    public init(pairing: SyncIdentifier) {
        self.pairing = pairing
    }
}

/// `POST /v1/pairings/{nameplate}/messages`: one opaque message from the caller's side.
public struct PairingPost: Codable, Sendable {
    public var body: Data

    public init(body: Data) {
        self.body = body
    }
}

/// A message as the other side reads it, numbered from 0 in its sender's order.
public struct PairingMessage: Codable, Sendable, Equatable {
    public var index: Int64
    public var body: Data

    public init(index: Int64, body: Data) {
        self.index = index
        self.body = body
    }
}

/// `GET /v1/pairings/{nameplate}/messages?after=I`: the other side's messages after index `I`.
public struct PairingMessages: Codable, Sendable, Equatable {
    public var messages: [PairingMessage]

    public init(messages: [PairingMessage]) {
        self.messages = messages
    }
}

extension SyncLimits {
    /// How long a pairing lives: long enough to type a code, short enough to bound guessing.
    public static let pairingLifetime: Int64 = 600
    /// Messages one side may post to one pairing (the exchange needs two or three).
    public static let pairingMessages = 8
    /// The largest pairing message.
    public static let pairingMessage = 64 * 1024
    /// Pairings one account may hold open at once.
    public static let pairingsPerAccount = 4
    /// Pairings the server holds open at once: nameplates stay at most four digits.
    public static let pairings = 9_999
}
