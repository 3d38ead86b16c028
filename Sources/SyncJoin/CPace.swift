import CSodium
import Crypto
import Foundation
import KeychainModel
import SyncCrypto

/// CPace (draft-irtf-cfrg-cpace) with ristretto255 and SHA-512, the initiator-responder
/// setting: the password-authenticated key exchange two devices run over the untrusted
/// server when one joins the other's circle with a short code. The server relays the two
/// shares and learns nothing it could test a guess against offline; a party that does not
/// know the code learns one guess's worth.
///
/// The group operations are libsodium's (`crypto_core_ristretto255_from_hash`,
/// `crypto_scalarmult_ristretto255`); the strings (`lv_cat`, the generator string, the
/// transcript) follow the draft and are checked against its test vectors.
public struct CPace: Sendable {
    public enum Role: Sendable {
        case initiator, responder
    }

    static let dsi = Array("CPaceRistretto255".utf8)
    /// SHA-512's input block.
    static let hashBlock = 128
    public static let shareLength = 32

    public let role: Role
    /// This party's share (Ya or Yb), sent to the other with ``associatedData``.
    public let share: Data
    public let associatedData: Data
    private let sid: Data
    private let scalar: SecretBytes

    /// Starts a run: derives the generator from the code (`prs`), the channel identifier and
    /// the session id, picks a random scalar and computes this party's share.
    public init(role: Role, prs: SecretBytes, channel: Data, sid: Data, associatedData: Data) throws(SyncCryptoError) {
        try Self.ready()
        let scalar = SecretBytes(count: 32) { crypto_core_ristretto255_scalar_random($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        try self.init(role: role, prs: prs, channel: channel, sid: sid, associatedData: associatedData, scalar: scalar)
    }

    /// A run with a given scalar (little-endian): for the draft's test vectors.
    init(role: Role, prs: SecretBytes, channel: Data, sid: Data, associatedData: Data, scalar: SecretBytes) throws(SyncCryptoError) {
        try Self.ready()
        self.role = role
        self.sid = sid
        self.associatedData = associatedData
        self.scalar = scalar
        var generator = Self.generator(prs: prs, channel: channel, sid: sid)
        defer { generator.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        share = try Self.multiply(scalar, generator).withUnsafeBytes { Data($0) }
    }

    /// The intermediate session key (ISK, 64 bytes) from the other party's share and
    /// associated data; throws `.authentication` when the share is not a valid point or
    /// gives the identity (an attacker's share). The keys of the channel come from the ISK
    /// by HKDF, and ``confirmation(isk:)`` proves each side holds it.
    public func finish(peerShare: Data, peerAssociatedData: Data) throws(SyncCryptoError) -> SecretBytes {
        guard peerShare.count == Self.shareLength else { throw SyncCryptoError(.malformed, "a CPace share is 32 bytes") }
        let k = try Self.multiply(scalar, Array(peerShare))
        let (ya, ada, yb, adb) =
            role == .initiator ? (share, associatedData, peerShare, peerAssociatedData) : (peerShare, peerAssociatedData, share, associatedData)
        var hash = SHA512()
        k.withUnsafeBytes { k in
            var prefix: [UInt8] = []
            Self.appendLengthPrefixed(Self.dsi + Array("_ISK".utf8), to: &prefix)
            Self.appendLengthPrefixed(Array(sid), to: &prefix)
            Self.appendLength(k.count, to: &prefix)
            hash.update(data: prefix)
            hash.update(bufferPointer: k)
        }
        hash.update(data: Self.transcript(ya, ada, yb, adb))
        return SecretBytes(hash.finalize())
    }

    /// This party's key-confirmation tag (the draft's §9.4): HMAC-SHA-512 under
    /// `SHA-512("CPaceMac" || sid || ISK)` over `lv_cat(share, associated data)`.
    public func confirmation(isk: SecretBytes) -> Data {
        Self.confirmation(isk: isk, sid: sid, share: share, associatedData: associatedData)
    }

    /// Checks the other party's tag in constant time.
    public func verifyConfirmation(_ tag: Data, isk: SecretBytes, peerShare: Data, peerAssociatedData: Data) -> Bool {
        let expected = Self.confirmation(isk: isk, sid: sid, share: peerShare, associatedData: peerAssociatedData)
        return SecretBytes(expected).isEqual(to: SecretBytes(tag))
    }

    static func confirmation(isk: SecretBytes, sid: Data, share: Data, associatedData: Data) -> Data {
        var keyHash = SHA512()
        keyHash.update(data: Array("CPaceMac".utf8))
        keyHash.update(data: sid)
        isk.withUnsafeBytes { keyHash.update(bufferPointer: $0) }
        let macKey = SymmetricKey(data: keyHash.finalize())
        var message: [UInt8] = []
        appendLengthPrefixed(Array(share), to: &message)
        appendLengthPrefixed(Array(associatedData), to: &message)
        return Data(HMAC<SHA512>.authenticationCode(for: message, using: macKey))
    }

    // MARK: The draft's functions

    static func ready() throws(SyncCryptoError) {
        guard trousseau_sodium_ready() >= 0 else { throw SyncCryptoError(.authentication, "libsodium cannot be initialised") }
    }

    /// LEB128 length, then the bytes (`prepend_len`).
    static func appendLengthPrefixed(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendLength(bytes.count, to: &out)
        out += bytes
    }

    static func appendLength(_ length: Int, to out: inout [UInt8]) {
        var length = length
        repeat {
            let low = UInt8(length & 0x7f)
            length >>= 7
            out.append(length > 0 ? low | 0x80 : low)
        } while length > 0
    }

    /// `generator_string(DSI, PRS, CI, sid, 128)`: `lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid)`.
    /// Holds the code: the caller zeroes it.
    static func generatorString(prs: SecretBytes, channel: Data, sid: Data) -> [UInt8] {
        var out: [UInt8] = []
        // Room for all of it at once: a reallocation would leave a copy of the code behind.
        out.reserveCapacity(hashBlock + prs.count + channel.count + sid.count + 16)
        appendLengthPrefixed(dsi, to: &out)
        appendLength(prs.count, to: &out)
        prs.withUnsafeBytes { out += $0 }
        var prsLengthBytes: [UInt8] = []
        appendLength(prs.count, to: &prsLengthBytes)
        let zpad = max(0, hashBlock - (prsLengthBytes.count + prs.count) - (1 + dsi.count) - 1)
        appendLengthPrefixed([UInt8](repeating: 0, count: zpad), to: &out)
        appendLengthPrefixed(Array(channel), to: &out)
        appendLengthPrefixed(Array(sid), to: &out)
        return out
    }

    /// The generator's encoding: ristretto255's element derivation of SHA-512(generator string).
    static func generator(prs: SecretBytes, channel: Data, sid: Data) -> [UInt8] {
        var string = generatorString(prs: prs, channel: channel, sid: sid)
        defer { string.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        var hash = Array(SHA512.hash(data: string))
        defer { hash.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        var point = [UInt8](repeating: 0, count: 32)
        _ = crypto_core_ristretto255_from_hash(&point, hash)
        return point
    }

    /// `scalar_mult_vfy`: refuses a point that does not decode or a product that is the identity.
    static func multiply(_ scalar: SecretBytes, _ point: [UInt8]) throws(SyncCryptoError) -> SecretBytes {
        var failed = false
        let product = SecretBytes(count: 32) { out in
            scalar.withUnsafeBytes { n in
                failed = crypto_scalarmult_ristretto255(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), n.baseAddress!.assumingMemoryBound(to: UInt8.self), point) != 0
            }
        }
        guard !failed else { throw SyncCryptoError(.authentication, "the other party's CPace share is not a valid point") }
        return product
    }

    /// `transcript_ir(Ya, ADa, Yb, ADb)`: `lv_cat(Ya, ADa) || lv_cat(Yb, ADb)`.
    static func transcript(_ ya: Data, _ ada: Data, _ yb: Data, _ adb: Data) -> [UInt8] {
        var out: [UInt8] = []
        for part in [ya, ada, yb, adb] { appendLengthPrefixed(Array(part), to: &out) }
        return out
    }
}
