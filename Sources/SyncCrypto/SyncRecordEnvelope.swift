import Crypto
import FoundationEssentials
import KeychainModel
import SyncProtocol

/// A sync record's body as the server stores it: the plaintext padded (``SyncPadding``) and
/// sealed with AES-256-GCM under a fresh key made for this one write; that key wrapped by the
/// record's parent key (a class key, or the zone key for a class key); and the writer's
/// Ed25519 signature over all of it. Both AEADs and the signature bind the record's
/// ``SyncRecordContext`` (zone, record, version, type, tombstone), the parent key's id and
/// the writer, so a server that moves a body to another record, zone or version, replays an
/// old version, flips a tombstone or edits a byte is caught before anything is applied.
///
/// Format 1, every field bounded:
///
///     u8    format (1)
///     lp    parent key id   (UTF-8, ≤ 64 bytes; lp = u32 big-endian length, then the bytes)
///     lp    writer device id (UTF-8, ≤ 64 bytes)
///     60    wrapped record key (AES-GCM: 12 nonce, 32 key, 16 tag)
///     lp    sealed plaintext (12 nonce, ciphertext, 16 tag; ≤ SyncLimits.recordBody)
///     64    Ed25519 signature
public struct SyncRecordEnvelope: Sendable, Equatable {
    public static let format: UInt8 = 1
    static let wrappedKeyLength = 12 + 32 + 16
    static let signatureLength = 64

    public var parentKey: SyncIdentifier
    public var writer: SyncIdentifier
    public var wrappedKey: Data
    public var sealed: Data
    public var signature: Data

    /// Seals `plaintext` for `context` under a fresh record key wrapped by `parent`, signed by
    /// the writing device.
    public static func seal(
        _ plaintext: SecretBytes, context: SyncRecordContext, parent: (id: SyncIdentifier, key: SymmetricKey),
        writer: SyncIdentifier, signingKey: Curve25519.Signing.PrivateKey
    ) throws -> SyncRecordEnvelope {
        let aad = associatedData(context, parentKey: parent.id, writer: writer)
        let recordKey = SymmetricKey(size: .bits256)
        let wrappedKey = try recordKey.withUnsafeBytes { key in
            try AES.GCM.seal(key, using: parent.key, authenticating: aad + Data("record key".utf8)).combined!
        }
        let padded = SyncPadding.pad(plaintext)
        let sealed = try padded.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: recordKey, authenticating: aad).combined!
        }
        var envelope = SyncRecordEnvelope(parentKey: parent.id, writer: writer, wrappedKey: wrappedKey, sealed: sealed, signature: Data())
        envelope.signature = try signingKey.signature(for: envelope.signedBytes(aad))
        return envelope
    }

    /// Opens the envelope for `context`: checks the writer's signature, unwraps the record key
    /// with the parent key, opens and unpads the plaintext. `parentKey` answers the key of an
    /// id this device holds; `writerKey` a member's signing key.
    public func open(
        context: SyncRecordContext, parentKey: (SyncIdentifier) -> SymmetricKey?,
        writerKey: (SyncIdentifier) -> Curve25519.Signing.PublicKey?
    ) throws(SyncCryptoError) -> SecretBytes {
        let aad = Self.associatedData(context, parentKey: self.parentKey, writer: writer)
        guard let signer = writerKey(writer) else { throw SyncCryptoError(.unknownWriter, "the record's writer is not a member") }
        guard signer.isValidSignature(signature, for: signedBytes(aad)) else {
            throw SyncCryptoError(.badSignature, "the writer's signature does not verify for this record")
        }
        guard let parent = parentKey(self.parentKey) else { throw SyncCryptoError(.unknownKey, "the record's key is not held here") }
        do {
            // swift-crypto answers `Data`: each copy is zeroed here once it is in zeroing storage.
            var keyBytes = try AES.GCM.open(AES.GCM.SealedBox(combined: wrappedKey), using: parent, authenticating: aad + Data("record key".utf8))
            let recordKey = SymmetricKey(data: keyBytes)
            keyBytes.resetBytes(in: 0..<keyBytes.count)
            var padded = try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: recordKey, authenticating: aad)
            let plaintext = SecretBytes(padded)
            padded.resetBytes(in: 0..<padded.count)
            return try SyncPadding.unpad(plaintext)
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.authentication, "the record's key or body does not open for this record")
        }
    }

    /// What both AEADs authenticate: a label, the context, the parent key and the writer.
    static func associatedData(_ context: SyncRecordContext, parentKey: SyncIdentifier, writer: SyncIdentifier) -> Data {
        var out = ByteWriter("trousseau sync record 1")
        context.write(to: &out)
        out.appendLengthPrefixed(parentKey.rawValue)
        out.appendLengthPrefixed(writer.rawValue)
        return out.data
    }

    func signedBytes(_ aad: Data) -> Data {
        var out = ByteWriter(capacity: aad.count + wrappedKey.count + sealed.count + 16)
        out.appendLengthPrefixed(aad)
        out.append(wrappedKey)
        out.appendLengthPrefixed(sealed)
        return out.data
    }

    // MARK: Bytes

    /// The body the server stores.
    public var encoded: Data {
        var out = ByteWriter(capacity: sealed.count + 256)
        out.append(Self.format)
        out.appendLengthPrefixed(parentKey.rawValue)
        out.appendLengthPrefixed(writer.rawValue)
        out.append(wrappedKey)
        out.appendLengthPrefixed(sealed)
        out.append(signature)
        return out.data
    }

    /// Reads a body the server returned; throws `.malformed` on anything but format 1 whole.
    public init(decoding body: Data) throws(SyncCryptoError) {
        do {
            var reader = ByteReader(body)
            guard try reader.byte() == Self.format else { throw SyncCryptoError(.malformed, "unknown record format") }
            guard let parentKey = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength)),
                let writer = SyncIdentifier(try reader.string(limit: SyncIdentifier.maximumLength))
            else { throw SyncCryptoError(.malformed, "a record names an ill-formed key or writer") }
            self.parentKey = parentKey
            self.writer = writer
            wrappedKey = Data(try reader.bytes(Self.wrappedKeyLength))
            sealed = try reader.lengthPrefixed(limit: SyncLimits.recordBody)
            guard sealed.count >= 12 + 16 else { throw SyncCryptoError(.malformed, "a record's body is too short") }
            signature = Data(try reader.bytes(Self.signatureLength))
            try reader.expectEnd("record")
        } catch let error as SyncCryptoError {
            throw error
        } catch {
            throw SyncCryptoError(.malformed, "a record is truncated or too long")
        }
    }

    init(parentKey: SyncIdentifier, writer: SyncIdentifier, wrappedKey: Data, sealed: Data, signature: Data) {
        self.parentKey = parentKey
        self.writer = writer
        self.wrappedKey = wrappedKey
        self.sealed = sealed
        self.signature = signature
    }
}
