import Crypto
import CryptoExtras
public import FoundationEssentials
public import KeychainModel

// SecKeyCreateEncryptedData / DecryptedData and SecKeyCopyKeyExchangeResult, with Apple's
// constructions (SecKeyAdaptors.m):
// - RSA: PKCS#1 v1.5 or OAEP; OAEP+AES-GCM wraps a random AES key (128 bits, 256 from RSA
//   4096) with OAEP and seals the message under it with a 16-byte zero IV, the recipient's
//   PKCS#1 public key as AAD: wrappedKey ‖ ciphertext ‖ tag.
// - ECIES: an ephemeral key on the recipient's curve, ECDH, X9.63 KDF over the shared
//   secret with the ephemeral public point as shared info, AES-GCM (128-bit key up to
//   P-256, 256 above) with the IV the KDF also derived (variable IV) or 16 zero bytes:
//   ephemeral point ‖ ciphertext ‖ tag.

extension AsymmetricKey {
    private static let gcmTagLength = 16
    private static let zeroIV = Data(repeating: 0, count: 16)

    /// `SecKeyCreateEncryptedData` with a public key.
    public func encrypt(_ algorithm: KeyAlgorithm, name: String, _ plaintext: Data) throws(KeychainError) -> Data {
        try require(.encrypt, algorithm, name: name)
        switch (storage, algorithm) {
        case (.rsaPublic(let key), .rsaEncryption(let padding, let aesGCM)):
            let recipient = try Self.encryptionKey(key)
            guard let rsaPadding = padding.rsaPadding else { throw KeychainError.param("\(name): algorithm not supported by the key") }
            guard aesGCM else { return try Self.rsaEncrypt(recipient, plaintext, rsaPadding) }
            let sessionKey = SymmetricKey(size: key.keySizeInBits >= 4096 ? .bits256 : .bits128)
            let wrapped = try Self.rsaEncrypt(recipient, sessionKey.withUnsafeBytes { Data($0) }, rsaPadding)
            let sealed = try Self.seal(plaintext, key: sessionKey, iv: Self.zeroIV, aad: key.pkcs1DERRepresentation, failure: "RSAWRAP")
            return wrapped + sealed
        case (.ecPublic(let recipient), .ecies(_, let digest, let variableIV)):
            let ephemeral = recipient.curve.generate()
            let ephemeralPoint = ephemeral.ecPublicKey.x963Representation
            let secret: SymmetricKey
            do {
                secret = try ephemeral.sharedSecret(with: recipient.x963Representation)
            } catch {
                throw KeychainError.param("ECpriv sharedsecret: bad public key")
            }
            let (key, iv) = try Self.eciesKey(secret, digest, curve: recipient.curve, ephemeralPoint: ephemeralPoint, variableIV: variableIV)
            return ephemeralPoint + (try Self.seal(plaintext, key: key, iv: iv, aad: nil, failure: "ECIES"))
        default:
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
    }

    /// `SecKeyCreateDecryptedData` with a private key. The plaintext is the caller's secret.
    public func decrypt(_ algorithm: KeyAlgorithm, name: String, _ ciphertext: Data) throws(KeychainError) -> Data {
        try require(.decrypt, algorithm, name: name)
        switch (storage, algorithm) {
        case (.rsaPrivate(let key), .rsaEncryption(let padding, let aesGCM)):
            guard let rsaPadding = padding.rsaPadding,
                let own = try? _RSA.Encryption.PrivateKey(unsafeDERRepresentation: key.derRepresentation)
            else { throw KeychainError.param("\(name): algorithm not supported by the key") }
            guard aesGCM else { return try Self.rsaDecrypt(own, ciphertext, rsaPadding) }
            let wrappedSize = blockSize
            guard ciphertext.count >= wrappedSize + Self.gcmTagLength else { throw KeychainError.param("RSA-WRAP too short input data") }
            let start = ciphertext.startIndex
            let sessionKey = try Self.rsaDecrypt(own, ciphertext[start..<start + wrappedSize], rsaPadding)
            guard sessionKey.count == (sizeInBits >= 4096 ? 32 : 16) else {
                throw KeychainError.param("RSA-WRAP bad ciphertext, unexpected session key size")
            }
            return try Self.open(
                ciphertext[(start + wrappedSize)...], key: SymmetricKey(data: sessionKey), iv: Self.zeroIV,
                aad: key.publicKey.pkcs1DERRepresentation, failure: "RSA-WRAP")
        case (.ecPrivate(let own), .ecies(_, let digest, let variableIV)):
            let pointLength = own.curve.publicKeyByteCount
            guard ciphertext.count >= pointLength else {
                throw KeychainError.param("<SecKeyRef \(summary)>: too small input packet for ECIES decrypt")
            }
            let start = ciphertext.startIndex
            let ephemeralPoint = Data(ciphertext[start..<start + pointLength])
            let secret: SymmetricKey
            do {
                secret = try own.sharedSecret(with: ephemeralPoint)
            } catch let error as KeychainError {
                throw error  // a held key's holder (a TPM) failing, as itself
            } catch {
                throw KeychainError.param("ECpriv sharedsecret: bad public key")
            }
            let (key, iv) = try Self.eciesKey(secret, digest, curve: own.curve, ephemeralPoint: ephemeralPoint, variableIV: variableIV)
            guard ciphertext.count - pointLength >= Self.gcmTagLength else { throw KeychainError.param("ECIES: Input data too short") }
            return try Self.open(ciphertext[(start + pointLength)...], key: key, iv: iv, aad: nil, failure: "ECIES")
        default:
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
    }

    /// `SecKeyCopyKeyExchangeResult`: ECDH with `peer` (a public key on the same curve),
    /// the raw shared secret, or `requestedSize` bytes of X9.63 KDF over it and `sharedInfo`.
    public func keyExchange(
        _ algorithm: KeyAlgorithm, name: String, with peer: AsymmetricKey, requestedSize: Int?, sharedInfo: Data?
    ) throws(KeychainError) -> Data {
        try require(.keyExchange, algorithm, name: name)
        guard case .ecPrivate(let own) = storage, case .ecdh(_, let digest) = algorithm else {
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
        guard case .ecPublic(let other) = peer.storage, other.curve == own.curve else {
            throw KeychainError.param("ECpriv sharedsecret: bad public key")
        }
        let secret: SymmetricKey
        do {
            secret = try own.sharedSecret(with: other.x963Representation)
        } catch let error as KeychainError {
            throw error  // a held key's holder (a TPM) failing, as itself
        } catch {
            throw KeychainError.param("ECpriv sharedsecret: bad public key")
        }
        guard let digest else { return secret.withUnsafeBytes { Data($0) } }
        guard let requestedSize else { throw KeychainError.param("kSecKeyKeyExchangeParameterRequestedSize is missing") }
        guard requestedSize > 0, requestedSize <= 32 * 255, let derived = digest.x963(secret, sharedInfo: sharedInfo ?? Data(), count: requestedSize) else {
            throw KeychainError.param("ECDHKeyExchange wrong input")
        }
        return derived.withUnsafeBytes { Data($0) }
    }

    // MARK: - Pieces

    private static func encryptionKey(_ key: _RSA.Signing.PublicKey) throws(KeychainError) -> _RSA.Encryption.PublicKey {
        guard let key = try? _RSA.Encryption.PublicKey(unsafeDERRepresentation: key.derRepresentation) else {
            throw KeychainError.param("RSA public key unusable for encryption")
        }
        return key
    }

    private static func rsaEncrypt(_ key: _RSA.Encryption.PublicKey, _ plaintext: Data, _ padding: _RSA.Encryption.Padding) throws(KeychainError) -> Data {
        guard plaintext.count <= key.maximumEncryptSize(with: padding), let ciphertext = try? key.encrypt(plaintext, padding: padding) else {
            throw KeychainError.param("RSAencrypt wrong input size")
        }
        return ciphertext
    }

    private static func rsaDecrypt(_ key: _RSA.Encryption.PrivateKey, _ ciphertext: Data, _ padding: _RSA.Encryption.Padding) throws(KeychainError) -> Data {
        guard let plaintext = try? key.decrypt(ciphertext, padding: padding) else {
            throw KeychainError.param("RSAdecrypt wrong input")
        }
        return plaintext
    }

    /// The AES key and IV of an ECIES message, as `SecKeyECIESKeyExchangeKDFX963CopyResult`
    /// derives them.
    private static func eciesKey(
        _ secret: SymmetricKey, _ digest: DigestAlgorithm, curve: EllipticCurve, ephemeralPoint: Data, variableIV: Bool
    ) throws(KeychainError) -> (SymmetricKey, Data) {
        let keyLength = curve.fieldByteCount * 8 > 256 ? 32 : 16
        let length = keyLength + (variableIV ? zeroIV.count : 0)
        guard let derived = digest.x963(secret, sharedInfo: ephemeralPoint, count: length) else {
            throw KeychainError.param("ECIES: unsupported KDF digest")
        }
        return derived.withUnsafeBytes { bytes in
            let key = SymmetricKey(data: bytes.prefix(keyLength))
            return (key, variableIV ? Data(bytes.suffix(from: keyLength)) : zeroIV)
        }
    }

    private static func seal(_ plaintext: Data, key: SymmetricKey, iv: Data, aad: Data?, failure: String) throws(KeychainError) -> Data {
        do {
            let nonce = try AES.GCM.Nonce(data: iv)
            let box = try aad.map { try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: $0) }
                ?? AES.GCM.seal(plaintext, using: key, nonce: nonce)
            return box.ciphertext + box.tag
        } catch {
            throw KeychainError.param("\(failure): Failed to aes-gcm encrypt data")
        }
    }

    private static func open(_ sealed: Data, key: SymmetricKey, iv: Data, aad: Data?, failure: String) throws(KeychainError) -> Data {
        guard sealed.count >= gcmTagLength else { throw KeychainError.param("\(failure): Input data too short") }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: sealed.dropLast(gcmTagLength), tag: sealed.suffix(gcmTagLength))
            return try aad.map { try AES.GCM.open(box, using: key, authenticating: $0) } ?? AES.GCM.open(box, using: key)
        } catch {
            throw KeychainError.param("\(failure): Failed to aes-gcm decrypt data")
        }
    }
}
