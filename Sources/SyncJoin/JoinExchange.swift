import Crypto
import Foundation
import KeychainModel
import SyncCrypto
import SyncProtocol

/// A message of the join exchange, the body of a pairing-mailbox message (JSON). The
/// server relays it and can read it: shares and tags are public by design, `sealed` is
/// AES-256-GCM under a key only the two devices derive.
public struct JoinMessage: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// CPace's share (and, from the member, its confirmation tag).
        case share
        /// The new device's confirmation tag and its sealed request.
        case confirm
        /// The member's sealed welcome.
        case welcome
        /// The sender gave up (a wrong code): the pairing is dead.
        case abort
    }

    public var kind: Kind
    public var share: Data?
    public var associatedData: Data?
    public var confirmation: Data?
    public var sealed: Data?

    public init(kind: Kind, share: Data? = nil, associatedData: Data? = nil, confirmation: Data? = nil, sealed: Data? = nil) {
        self.kind = kind
        self.share = share
        self.associatedData = associatedData
        self.confirmation = confirmation
        self.sealed = sealed
    }

    /// Reads a mailbox message; throws `.malformed` on anything out of bounds.
    public init(decoding body: Data) throws(SyncCryptoError) {
        guard body.count <= SyncLimits.pairingMessage, let message = try? JSONDecoder().decode(JoinMessage.self, from: body) else {
            throw SyncCryptoError(.malformed, "a join message is not one")
        }
        guard message.share.map({ $0.count == CPace.shareLength }) ?? true, message.associatedData.map({ $0.count <= 256 }) ?? true,
            message.confirmation.map({ $0.count == 64 }) ?? true, message.sealed.map({ $0.count <= 16 * 1024 }) ?? true
        else { throw SyncCryptoError(.malformed, "a join message's field is out of bounds") }
        self = message
    }

    public var encoded: Data { (try? JSONEncoder().encode(self)) ?? Data() }
}

/// What the new device asks, sealed to the member: its public keys (for the chain) and the
/// credential it will use with the server (the member registers it).
public struct JoinRequest: Sendable, Equatable {
    public var keys: SyncDevicePublicKeys
    public var credential: Data

    public init(keys: SyncDevicePublicKeys, credential: Data) {
        self.keys = keys
        self.credential = credential
    }

    public var encoded: Data {
        var out = ByteWriter(capacity: 1400)
        keys.encode(to: &out)
        out.appendLengthPrefixed(credential)
        return out.data
    }

    /// Reads a request the channel opened (from a device that knew the code, not yet trusted).
    public init(decoding bytes: Data) throws {
        var reader = ByteReader(bytes)
        keys = try SyncDevicePublicKeys(from: &reader)
        credential = try reader.lengthPrefixed(limit: 64)
        try reader.expectEnd("join request")
    }
}

/// What the member answers, sealed to the new device once it is in the chain: the account
/// and the chain's head to pin (the new device then reads the chain from the server and
/// verifies it through this pin).
public struct JoinWelcome: Sendable, Equatable {
    public var account: SyncIdentifier
    public var pin: MembershipPin

    public init(account: SyncIdentifier, pin: MembershipPin) {
        self.account = account
        self.pin = pin
    }

    public var encoded: Data {
        var out = ByteWriter()
        out.appendLengthPrefixed(account.rawValue)
        out.appendInteger(UInt64(bitPattern: pin.length))
        out.append(pin.head)
        return out.data
    }

    /// Reads a welcome the channel opened.
    public init(decoding bytes: Data) throws {
        var reader = ByteReader(bytes)
        guard let account = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)) else {
            throw SyncCryptoError(.malformed, "a welcome names an ill-formed account")
        }
        self.account = account
        pin = MembershipPin(length: Int64(bitPattern: try reader.integer(UInt64.self)), head: Data(try reader.bytes(32)))
        try reader.expectEnd("join welcome")
    }
}

/// The two devices' keys after CPace: HKDF-SHA256 of the ISK (salt: the pairing's id), one
/// key per direction; each direction seals one message.
struct JoinChannel: Sendable {
    let sending: SymmetricKey
    let receiving: SymmetricKey

    init(isk: SecretBytes, pairing: SyncIdentifier, role: CPace.Role) {
        let secret = isk.withUnsafeBytes { SymmetricKey(data: $0) }
        func key(_ direction: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: secret, salt: Data(pairing.rawValue.utf8), info: Data("trousseau join 1 \(direction)".utf8), outputByteCount: 32)
        }
        let toMember = key("new device to member"), toNewDevice = key("member to new device")
        (sending, receiving) = role == .initiator ? (toMember, toNewDevice) : (toNewDevice, toMember)
    }

    func seal(_ plaintext: Data, kind: JoinMessage.Kind) throws -> Data {
        try AES.GCM.seal(plaintext, using: sending, authenticating: Data(kind.rawValue.utf8)).combined!
    }

    func open(_ sealed: Data?, kind: JoinMessage.Kind) throws(SyncCryptoError) -> Data {
        guard let sealed, let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: receiving, authenticating: Data(kind.rawValue.utf8))
        else { throw SyncCryptoError(.authentication, "the join message does not open under the exchange's key") }
        return plaintext
    }
}

/// The constants both sides bind into CPace.
enum JoinBinding {
    static let channel = Data("trousseau join 1".utf8)

    static func associatedData(_ role: CPace.Role, device: SyncIdentifier) -> Data {
        Data(((role == .initiator ? "new device " : "member ") + device.rawValue).utf8)
    }
}

/// The new device's side of a join (CPace's initiator). It sends its share, checks the
/// member's tag (a wrong code fails here, and the device tells the member), sends its tag
/// and its sealed request, then opens the welcome.
public struct NewDeviceJoin: Sendable {
    let cpace: CPace
    let pairing: SyncIdentifier
    let keys: SyncDevicePublicKeys
    let credential: Data
    var channel: JoinChannel?

    /// Starts the exchange for the pairing `pairing` (the claim's answer) with the code the
    /// person typed; `keys` are this device's public keys (its private keys stay where they
    /// are: nothing here signs); `credential` is the token it will present to the server.
    public init(code: JoinCode, pairing: SyncIdentifier, keys: SyncDevicePublicKeys, credential: Data) throws(SyncCryptoError) {
        cpace = try CPace(
            role: .initiator, prs: code.secret, channel: JoinBinding.channel, sid: Data(pairing.rawValue.utf8),
            associatedData: JoinBinding.associatedData(.initiator, device: keys.device))
        self.pairing = pairing
        self.keys = keys
        self.credential = credential
    }

    /// The first message: this device's share.
    public var share: JoinMessage { JoinMessage(kind: .share, share: cpace.share, associatedData: cpace.associatedData) }

    /// Takes the member's share and tag; answers this device's tag and sealed request.
    /// Throws `.wrongCode` when the member's tag does not verify (send ``abort`` then).
    public mutating func confirm(_ reply: JoinMessage) throws(SyncCryptoError) -> JoinMessage {
        guard reply.kind == .share, let share = reply.share, let ad = reply.associatedData, let tag = reply.confirmation else {
            throw SyncCryptoError(.malformed, "the member's reply is not a share with its tag")
        }
        let isk = try cpace.finish(peerShare: share, peerAssociatedData: ad)
        guard cpace.verifyConfirmation(tag, isk: isk, peerShare: share, peerAssociatedData: ad) else {
            throw SyncCryptoError(.wrongCode, "the code does not match the member's: ask for a new code")
        }
        let channel = JoinChannel(isk: isk, pairing: pairing, role: .initiator)
        self.channel = channel
        let request = JoinRequest(keys: keys, credential: credential)
        let sealed: Data
        do {
            sealed = try channel.seal(request.encoded, kind: .confirm)
        } catch {
            throw SyncCryptoError(.authentication, "the request could not be sealed")
        }
        return JoinMessage(kind: .confirm, confirmation: cpace.confirmation(isk: isk), sealed: sealed)
    }

    /// Opens the member's welcome.
    public func welcome(_ message: JoinMessage) throws(SyncCryptoError) -> JoinWelcome {
        guard message.kind == .welcome, let channel else { throw SyncCryptoError(.malformed, "a welcome before the exchange was confirmed") }
        let plaintext = try channel.open(message.sealed, kind: .welcome)
        guard let welcome = try? JoinWelcome(decoding: plaintext) else { throw SyncCryptoError(.malformed, "the welcome is ill-formed") }
        return welcome
    }

    public static let abort = JoinMessage(kind: .abort)
}

/// A member's side of a join (CPace's responder). One exchange per code: any failure — a
/// wrong tag, a malformed message, an abort — ends the pairing, so a stranger gets one
/// guess.
public struct MemberPairing: Sendable {
    let cpace: CPace
    let pairing: SyncIdentifier
    var isk: SecretBytes?
    var peer: (share: Data, associatedData: Data)?
    var channel: JoinChannel?

    /// Starts the member's side for the pairing it opened, as the member `device`.
    public init(code: JoinCode, pairing: SyncIdentifier, device: SyncIdentifier) throws(SyncCryptoError) {
        cpace = try CPace(
            role: .responder, prs: code.secret, channel: JoinBinding.channel, sid: Data(pairing.rawValue.utf8),
            associatedData: JoinBinding.associatedData(.responder, device: device))
        self.pairing = pairing
    }

    /// Takes the new device's share; answers the member's share and tag.
    public mutating func answer(_ message: JoinMessage) throws(SyncCryptoError) -> JoinMessage {
        guard message.kind == .share, isk == nil, let share = message.share, let ad = message.associatedData else {
            throw SyncCryptoError(.malformed, "the new device's first message is not a share")
        }
        let isk = try cpace.finish(peerShare: share, peerAssociatedData: ad)
        self.isk = isk
        peer = (share, ad)
        return JoinMessage(kind: .share, share: cpace.share, associatedData: cpace.associatedData, confirmation: cpace.confirmation(isk: isk))
    }

    /// Takes the new device's tag and request: the device to approve. Throws `.wrongCode`
    /// when the tag does not verify (the code was wrong or guessed), `.membership` when the
    /// request names another device than the one CPace bound.
    public mutating func request(_ message: JoinMessage) throws(SyncCryptoError) -> JoinRequest {
        if message.kind == .abort { throw SyncCryptoError(.wrongCode, "the new device found the code wrong") }
        guard message.kind == .confirm, let isk, let peer, let tag = message.confirmation else {
            throw SyncCryptoError(.malformed, "the new device's second message is not its confirmation")
        }
        guard cpace.verifyConfirmation(tag, isk: isk, peerShare: peer.share, peerAssociatedData: peer.associatedData) else {
            throw SyncCryptoError(.wrongCode, "the new device's code does not match this one")
        }
        let channel = JoinChannel(isk: isk, pairing: pairing, role: .responder)
        let plaintext = try channel.open(message.sealed, kind: .confirm)
        guard let request = try? JoinRequest(decoding: plaintext), (32...64).contains(request.credential.count) else {
            throw SyncCryptoError(.malformed, "the new device's request is ill-formed")
        }
        guard JoinBinding.associatedData(.initiator, device: request.keys.device) == peer.associatedData else {
            throw SyncCryptoError(.membership, "the request names another device than the exchange")
        }
        self.channel = channel  // only a request that passed every check can be welcomed
        return request
    }

    /// The welcome for the approved device, once its add entry is in the chain.
    public func welcome(_ welcome: JoinWelcome) throws(SyncCryptoError) -> JoinMessage {
        guard let channel else { throw SyncCryptoError(.malformed, "a welcome before the request") }
        do {
            return JoinMessage(kind: .welcome, sealed: try channel.seal(welcome.encoded, kind: .welcome))
        } catch {
            throw SyncCryptoError(.authentication, "the welcome could not be sealed")
        }
    }
}
