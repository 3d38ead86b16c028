import Crypto
import FoundationEssentials
import KeychainModel
import SyncProtocol

/// A zone key sent to one member: HPKE (RFC 9180, base mode) with X-Wing, HKDF-SHA256 and
/// AES-256-GCM to the recipient's encryption key, then signed with the sender's Ed25519
/// key (HPKE's base mode says nothing of who sealed). The HPKE info and the signature bind
/// the record's context, the key's id, the recipient and the sender, so a share cannot be
/// moved to another record, zone, key or device, nor claimed by another sender.
///
/// Format 1 (the body of a ``SyncRecordType/keyShare`` record):
///
///     u8    format (1)
///     lp    key id         (lp = u32 big-endian length, then the bytes)
///     lp    recipient device id
///     lp    sender device id
///     1120  HPKE encapsulated key
///     lp    HPKE ciphertext (the 32-byte key and a 16-byte tag)
///     64    Ed25519 signature over "trousseau key share 1", the context and every byte above
public struct SyncKeyShare: Sendable, Equatable {
    public static let format: UInt8 = 1
    static let ciphersuite = HPKE.Ciphersuite.XWingMLKEM768X25519_SHA256_AES_GCM_256
    static let encapsulatedKeyLength = 1120
    static let ciphertextLength = 32 + 16

    public var keyID: SyncIdentifier
    public var recipient: SyncIdentifier
    public var sender: SyncIdentifier
    public var encapsulatedKey: Data
    public var ciphertext: Data
    public var signature: Data

    /// Seals `key` (named `keyID`) for `recipient`, signed by `sender`.
    public static func seal(
        _ key: SymmetricKey, keyID: SyncIdentifier, context: SyncRecordContext, to recipient: SyncDevicePublicKeys, from sender: SyncDeviceKeys
    ) throws -> SyncKeyShare {
        let info = info(context, keyID: keyID, recipient: recipient.device, sender: sender.device)
        var hpke = try HPKE.Sender(recipientKey: recipient.encryption, ciphersuite: ciphersuite, info: info)
        let ciphertext = try key.withUnsafeBytes { try hpke.seal($0, authenticating: info) }
        var share = SyncKeyShare(
            keyID: keyID, recipient: recipient.device, sender: sender.device, encapsulatedKey: hpke.encapsulatedKey,
            ciphertext: ciphertext, signature: Data())
        share.signature = try sender.signing.signature(for: share.signedBytes(info))
        return share
    }

    /// Opens a share addressed to `recipient` for `context`: the sender must be a member
    /// (`senderKey`) whose signature verifies, and the HPKE box must open.
    public func open(
        context: SyncRecordContext, recipient keys: SyncDeviceKeys, senderKey: (SyncIdentifier) -> Curve25519.Signing.PublicKey?
    ) throws(SyncCryptoError) -> SymmetricKey {
        guard recipient == keys.device else { throw SyncCryptoError(.unknownKey, "the share is addressed to another device") }
        let info = Self.info(context, keyID: keyID, recipient: recipient, sender: sender)
        guard let signer = senderKey(sender) else { throw SyncCryptoError(.unknownWriter, "the share's sender is not a member") }
        guard signer.isValidSignature(signature, for: signedBytes(info)) else {
            throw SyncCryptoError(.badSignature, "the sender's signature does not verify for this share")
        }
        do {
            var hpke = try HPKE.Recipient(privateKey: keys.encryption, ciphersuite: Self.ciphersuite, info: info, encapsulatedKey: encapsulatedKey)
            var bytes = try hpke.open(ciphertext, authenticating: info)
            defer { bytes.resetBytes(in: 0..<bytes.count) }
            guard bytes.count == 32 else { throw SyncCryptoError(.malformed, "a shared key is 32 bytes") }
            return SymmetricKey(data: bytes)
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.authentication, "the share does not open with this device's key")
        }
    }

    static func info(_ context: SyncRecordContext, keyID: SyncIdentifier, recipient: SyncIdentifier, sender: SyncIdentifier) -> Data {
        var out = ByteWriter("trousseau key share 1")
        context.write(to: &out)
        out.appendLengthPrefixed(keyID.rawValue)
        out.appendLengthPrefixed(recipient.rawValue)
        out.appendLengthPrefixed(sender.rawValue)
        return out.data
    }

    func signedBytes(_ info: Data) -> Data {
        var out = ByteWriter(capacity: info.count + encapsulatedKey.count + ciphertext.count + 16)
        out.appendLengthPrefixed(info)
        out.append(encapsulatedKey)
        out.appendLengthPrefixed(ciphertext)
        return out.data
    }

    // MARK: Bytes

    public var encoded: Data {
        var out = ByteWriter(capacity: 1400)
        out.append(Self.format)
        out.appendLengthPrefixed(keyID.rawValue)
        out.appendLengthPrefixed(recipient.rawValue)
        out.appendLengthPrefixed(sender.rawValue)
        out.append(encapsulatedKey)
        out.appendLengthPrefixed(ciphertext)
        out.append(signature)
        return out.data
    }

    public init(decoding body: Data) throws(SyncCryptoError) {
        do {
            var reader = ByteReader(body)
            guard try reader.byte() == Self.format else { throw SyncCryptoError(.malformed, "unknown key share format") }
            guard let keyID = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)),
                let recipient = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)),
                let sender = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength))
            else { throw SyncCryptoError(.malformed, "a key share names an ill-formed key or device") }
            self.keyID = keyID
            self.recipient = recipient
            self.sender = sender
            encapsulatedKey = Data(try reader.bytes(Self.encapsulatedKeyLength))
            ciphertext = try reader.lengthPrefixed(limit: Self.ciphertextLength)
            guard ciphertext.count == Self.ciphertextLength else { throw SyncCryptoError(.malformed, "a key share's ciphertext is 48 bytes") }
            signature = Data(try reader.bytes(64))
            try reader.expectEnd("key share")
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.malformed, "a key share is truncated or too long")
        }
    }

    init(keyID: SyncIdentifier, recipient: SyncIdentifier, sender: SyncIdentifier, encapsulatedKey: Data, ciphertext: Data, signature: Data) {
        self.keyID = keyID
        self.recipient = recipient
        self.sender = sender
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
        self.signature = signature
    }
}
