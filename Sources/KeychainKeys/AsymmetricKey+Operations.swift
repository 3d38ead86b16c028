@_spi(ANSIKDF) import Crypto
import CryptoExtras
public import FoundationEssentials
public import KeychainModel

// The operations of a software key, each as Apple's adaptors do it (SecKeyAdaptors.m,
// SecECKey.m, SecRSAKey.c): which key class may do what, the constructions byte for byte,
// and the status and words of each failure.

extension AsymmetricKey {
    /// Whether the key can do `operation` with `algorithm` (`SecKeyIsAlgorithmSupported`).
    ///
    /// A private key signs, decrypts and derives; a public key verifies and encrypts. SHA-224
    /// message digests and RSA over a caller's digest are not offered (swift-crypto has no
    /// SHA-224 and takes RSA digests only as its own types), nor are OAEP's SHA-224/384/512.
    public func supports(_ operation: KeyOperation, _ algorithm: KeyAlgorithm) -> Bool {
        switch (operation, algorithm, type, keyClass) {
        case (.sign, .ecdsa(_, let input, let digest), .ellipticCurve, .private),
            (.verify, .ecdsa(_, let input, let digest), .ellipticCurve, .public):
            return input == .digest || digest?.isHashable == true
        case (.sign, .rsaSignature(_, let input, let digest), .rsa, .private),
            (.verify, .rsaSignature(_, let input, let digest), .rsa, .public):
            return input == .message && digest.isHashable
        case (.encrypt, .rsaEncryption(let padding, _), .rsa, .public),
            (.decrypt, .rsaEncryption(let padding, _), .rsa, .private):
            return padding.rsaPadding != nil
        case (.encrypt, .ecies(_, let digest, _), .ellipticCurve, .public),
            (.decrypt, .ecies(_, let digest, _), .ellipticCurve, .private),
            (.keyExchange, .ecdh(_, let digest?), .ellipticCurve, .private):
            return digest.isHashable
        case (.keyExchange, .ecdh(_, nil), .ellipticCurve, .private):
            return true
        default:
            return false
        }
    }

    /// Throws Apple's errSecParam when the key cannot do `operation` with `algorithm`.
    func require(_ operation: KeyOperation, _ algorithm: KeyAlgorithm, name: String) throws(KeychainError) {
        guard supports(operation, algorithm) else {
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
    }

    // MARK: - Signatures

    /// `SecKeyCreateSignature`: `data` is the message or, for `…Digest…` algorithms, its digest.
    public func signature(_ algorithm: KeyAlgorithm, name: String, for data: Data) throws(KeychainError) -> Data {
        try require(.sign, algorithm, name: name)
        switch (storage, algorithm) {
        case (.ecPrivate(let key), .ecdsa(let encoding, let input, let digest)):
            let signature: (der: Data, raw: Data)
            do {
                signature = try key.sign(digest: try Self.digest(of: data, input: input, digest, name: name))
            } catch let error as KeychainError {
                throw error
            } catch {
                throw KeychainError.param("<SecKeyRef \(summary)>: X962 signing failed")
            }
            return encoding == .x962 ? signature.der : signature.raw
        case (.rsaPrivate(let key), .rsaSignature(let padding, _, let digest)):
            guard let hashed = digest.hash(data) else { throw KeychainError.param("\(name): algorithm not supported by the key") }
            do {
                return try key.signature(for: hashed, padding: padding == .pss ? .PSS : .insecurePKCS1v1_5).rawRepresentation
            } catch {
                throw KeychainError.param(padding == .pss ? "RSASSA-PSS incompatible algorithm for key size" : "RSAsign wrong input data length")
            }
        default:
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
    }

    /// `SecKeyVerifySignature`: true, or errSecVerifyFailed with Apple's words.
    public func verify(_ algorithm: KeyAlgorithm, name: String, signature: Data, for data: Data) throws(KeychainError) -> Bool {
        try require(.verify, algorithm, name: name)
        switch (storage, algorithm) {
        case (.ecPublic(let key), .ecdsa(let encoding, let input, let digest)):
            let hashed = try Self.digest(of: data, input: input, digest, name: name)
            switch encoding {
            case .x962:
                guard key.isValid(der: signature, digest: hashed) else {
                    throw KeychainError(status: .verifyFailed, message: "EC signature verification failed, no match")
                }
            case .rfc4754:
                guard signature.count == 2 * key.curve.fieldByteCount else {
                    throw KeychainError(status: .verifyFailed, message: "Wrong ECDSA RFC4754 signature")
                }
                guard key.isValid(raw: signature, digest: hashed) else {
                    throw KeychainError(status: .verifyFailed, message: "EC signature verification failed, no match")
                }
            }
            return true
        case (.rsaPublic(let key), .rsaSignature(let padding, _, let digest)):
            guard let hashed = digest.hash(data),
                key.isValidSignature(.init(rawRepresentation: signature), for: hashed, padding: padding == .pss ? .PSS : .insecurePKCS1v1_5)
            else {
                throw KeychainError(status: .verifyFailed, message: "RSA signature verification failed, no match")
            }
            return true
        default:
            throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(summary)>")
        }
    }

    /// The digest to sign: the message hashed, or the caller's digest (whose length must be
    /// the algorithm's, when it names one).
    private static func digest(of data: Data, input: KeyAlgorithm.SignatureInput, _ digest: DigestAlgorithm?, name: String) throws(KeychainError) -> any Digest {
        switch input {
        case .message:
            guard let digest, let hashed = digest.hash(data) else { throw KeychainError.param("\(name): algorithm not supported by the key") }
            return hashed
        case .digest:
            if let digest, data.count != digest.byteCount {
                throw KeychainError.param("bad digest size for signing with algorithm \(name)")
            }
            return PrecomputedDigest(bytes: Array(data))
        }
    }
}

extension DigestAlgorithm {
    /// Whether swift-crypto computes it (all but SHA-224).
    var isHashable: Bool { self != .sha224 }

    /// `data` hashed; nil for SHA-224.
    func hash(_ data: Data) -> (any Digest)? {
        switch self {
        case .sha1: Insecure.SHA1.hash(data: data)
        case .sha224: nil
        case .sha256: SHA256.hash(data: data)
        case .sha384: SHA384.hash(data: data)
        case .sha512: SHA512.hash(data: data)
        }
    }

    /// The ANSI X9.63 KDF over `secret` with this digest; nil for SHA-224.
    /// ANSI X9.63's KDF over an ECDH shared secret (swift-crypto's, which SharedSecret's
    /// x963DerivedSymmetricKey also runs; here over bytes, so that a secret a TPM computed
    /// can go through it too).
    func x963(_ secret: SymmetricKey, sharedInfo: Data, count: Int) -> SymmetricKey? {
        switch self {
        case .sha1: ANSIKDFx963<Insecure.SHA1>.deriveKey(inputKeyMaterial: secret, info: sharedInfo, outputByteCount: count)
        case .sha224: nil
        case .sha256: ANSIKDFx963<SHA256>.deriveKey(inputKeyMaterial: secret, info: sharedInfo, outputByteCount: count)
        case .sha384: ANSIKDFx963<SHA384>.deriveKey(inputKeyMaterial: secret, info: sharedInfo, outputByteCount: count)
        case .sha512: ANSIKDFx963<SHA512>.deriveKey(inputKeyMaterial: secret, info: sharedInfo, outputByteCount: count)
        }
    }
}

extension KeyAlgorithm.RSAEncryptionPadding {
    /// swift-crypto's padding; nil for OAEP over SHA-224/384/512, which it lacks.
    var rsaPadding: _RSA.Encryption.Padding? {
        switch self {
        case .pkcs1: ._WEAK_AND_INSECURE_PKCS_V1_5
        case .oaep(.sha1): .PKCS1_OAEP
        case .oaep(.sha256): .PKCS1_OAEP_SHA256
        case .oaep: nil
        }
    }
}
