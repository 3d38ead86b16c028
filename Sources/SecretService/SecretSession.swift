import COpenSSL
import Crypto
import CryptoExtras
import FoundationEssentials
public import KeychainModel

/// How secrets travel between a Secret Service client and the service within one session
/// (Secret Service API, "Transfer of Secrets"): `plain`, or
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` — Diffie-Hellman in RFC 2409's 1024-bit group,
/// the shared secret left-padded to 128 bytes, HKDF-SHA256 with no salt and no info to a
/// 128-bit AES key, each secret AES-128-CBC with PKCS#7 padding under a fresh 16-byte IV.
public struct SecretSession: Sendable {
    /// The algorithms `OpenSession` accepts, by their names on the bus.
    public enum Algorithm: String, Sendable, CaseIterable {
        case plain = "plain"
        case dhAES = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    }

    /// Why an `OpenSession` input or a secret's fields are refused; the D-Bus error each
    /// maps to is the front end's to choose (`NotSupported`, `InvalidArgs`).
    public enum Failure: Error, Equatable, Sendable {
        /// An algorithm the service does not offer.
        case notSupported(String)
        /// A public key outside 2 … p − 2, or too long.
        case invalidPublicKey
        /// `parameters` that are not what the algorithm sends (empty for plain, a 16-byte IV).
        case invalidParameters
        /// A value that is empty or not whole AES blocks, or whose padding is wrong.
        case invalidValue
        /// OpenSSL could not make a key pair (no randomness, no memory).
        case unavailable
    }

    public let algorithm: Algorithm
    private let key: SymmetricKey?

    /// Opens a session with a client's `OpenSession(algorithm, input)`.
    ///
    /// - Parameter input: the client's public key (unsigned big-endian) for the DH
    ///   algorithm; ignored for plain (clients send an empty string there).
    /// - Returns: the session and the output to send back — the service's public key
    ///   (128 bytes) for DH, nothing for plain.
    public static func open(algorithm name: String, input: [UInt8]) throws(Failure) -> (session: SecretSession, output: [UInt8]) {
        guard let algorithm = Algorithm(rawValue: name) else { throw .notSupported(name) }
        switch algorithm {
        case .plain:
            return (SecretSession(algorithm: .plain, key: nil), [])
        case .dhAES:
            var publicKey = [UInt8](repeating: 0, count: 128)
            var made = Int32(TROUSSEAU_DH_INTERNAL)
            let privateKey = SecretBytes(count: 128) { buffer in
                made = trousseau_dh1024_keypair(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), &publicKey)
            }
            guard made == Int32(TROUSSEAU_DH_OK) else { throw .unavailable }
            var agreed = Int32(TROUSSEAU_DH_INTERNAL)
            let shared = SecretBytes(count: 128) { buffer in
                privateKey.withUnsafeBytes { privateBytes in
                    agreed = trousseau_dh1024_shared_secret(
                        privateBytes.bindMemory(to: UInt8.self).baseAddress!, input, input.count,
                        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            guard agreed == Int32(TROUSSEAU_DH_OK) else { throw .invalidPublicKey }
            let key = shared.withUnsafeBytes { bytes in
                HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: [UInt8](), info: [UInt8](), outputByteCount: 16)
            }
            return (SecretSession(algorithm: .dhAES, key: key), publicKey)
        }
    }

    private init(algorithm: Algorithm, key: SymmetricKey?) {
        self.algorithm = algorithm
        self.key = key
    }

    /// A secret as it leaves the service: `(parameters, value)` of the Secret struct, the
    /// value in zeroing storage (in a plain session it is the plaintext).
    public func encode(_ secret: SecretBytes) -> (parameters: SecretBytes, value: SecretBytes) {
        guard let key else { return (SecretBytes([]), secret) }
        let iv = AES._CBC.IV()
        // Encrypting whole, padded input with a 128-bit key cannot fail.
        let value = secret.withUnsafeBytes { try! AES._CBC.encrypt($0, using: key, iv: iv) }
        return (SecretBytes(iv), SecretBytes(value))
    }

    /// A secret a client sent: its plaintext.
    ///
    /// - Throws: ``Failure/invalidParameters`` or ``Failure/invalidValue``.
    public func decode(parameters: SecretBytes, value: SecretBytes) throws(Failure) -> SecretBytes {
        guard let key else {
            guard parameters.isEmpty else { throw .invalidParameters }
            return value
        }
        guard parameters.count == 16, let iv = parameters.withUnsafeBytes({ try? AES._CBC.IV(ivBytes: $0) }) else { throw .invalidParameters }
        guard !value.isEmpty, value.count % 16 == 0, let plaintext = value.withUnsafeBytes({ try? AES._CBC.decrypt($0, using: key, iv: iv) }) else {
            throw .invalidValue
        }
        return SecretBytes(plaintext)
    }
}
