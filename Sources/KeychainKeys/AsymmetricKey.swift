import Crypto
import CryptoExtras
public import FoundationEssentials
public import KeychainModel

/// An RSA or elliptic-curve key, public or private: what a software `SecKey` holds.
///
/// Its external representation is Apple's (``externalRepresentation``): ANSI X9.63
/// `04‖X‖Y[‖K]` for elliptic-curve keys, PKCS#1 `RSAPublicKey` / `RSAPrivateKey` for RSA.
public struct AsymmetricKey: Sendable {
    /// `kSecAttrKeyType`.
    public enum KeyType: Sendable, Hashable {
        case rsa
        case ellipticCurve

        /// Apple's value (`kSecAttrKeyTypeRSA` "42", `kSecAttrKeyTypeECSECPrimeRandom` "73").
        public var attributeValue: String {
            switch self {
            case .rsa: SecName.kSecAttrKeyTypeRSA
            case .ellipticCurve: SecName.kSecAttrKeyTypeECSECPrimeRandom
            }
        }

        /// The type Apple's value names.
        public init?(attributeValue: String) {
            switch attributeValue {
            case SecName.kSecAttrKeyTypeRSA: self = .rsa
            case SecName.kSecAttrKeyTypeECSECPrimeRandom: self = .ellipticCurve
            default: return nil
            }
        }
    }

    /// `kSecAttrKeyClass`.
    public enum KeyClass: Sendable, Hashable {
        case `public`
        case `private`

        /// Apple's value ("0", "1").
        public var attributeValue: String {
            self == .public ? SecName.kSecAttrKeyClassPublic : SecName.kSecAttrKeyClassPrivate
        }

        public init?(attributeValue: String) {
            switch attributeValue {
            case SecName.kSecAttrKeyClassPublic: self = .public
            case SecName.kSecAttrKeyClassPrivate: self = .private
            default: return nil
            }
        }
    }

    enum Storage: Sendable {
        case ecPrivate(any ECPrivateKey)
        case ecPublic(any ECPublicKey)
        case rsaPrivate(_RSA.Signing.PrivateKey)
        case rsaPublic(_RSA.Signing.PublicKey)
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    // MARK: - Making keys

    /// The RSA key sizes accepted: from 1024 bits (swift-crypto's floor; Apple's is 512) to
    /// 8192 (Apple's ceiling), in whole bytes.
    public static let rsaSizes = 1024...8192

    /// A new private key of `type` and `bits`, as `SecKeyCreateRandomKey` makes it: RSA with
    /// e = 65537, or one of the P-256, P-384 and P-521 curves.
    ///
    /// - Throws: errSecParam for a size the type does not have.
    public static func generate(_ type: KeyType, bits: Int) throws(KeychainError) -> AsymmetricKey {
        switch type {
        case .ellipticCurve:
            guard let curve = EllipticCurve(bits: bits) else {
                throw KeychainError.param("EC key generation failed: unsupported key size \(bits) (256, 384 or 521)")
            }
            return AsymmetricKey(.ecPrivate(curve.generate()))
        case .rsa:
            guard rsaSizes.contains(bits), bits % 8 == 0 else {
                throw KeychainError.param("RSA key generation failed: unsupported key size \(bits) (1024 to 8192, a multiple of 8)")
            }
            do {
                let key = try bits < 2048
                    ? _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: bits))
                    : _RSA.Signing.PrivateKey(keySize: .init(bitCount: bits))
                return AsymmetricKey(.rsaPrivate(key))
            } catch {
                throw KeychainError.param("RSA key generation failed for \(bits) bits")
            }
        }
    }

    /// The key `data` holds in Apple's external representation, as `SecKeyCreateWithData`
    /// reads it: X9.63 for elliptic-curve keys; PKCS#1 for RSA, and for RSA public keys
    /// also X.509 SubjectPublicKeyInfo.
    ///
    /// - Throws: errSecParam with Apple's words when the bytes are not such a key.
    public init(externalRepresentation data: Data, type: KeyType, keyClass: KeyClass) throws(KeychainError) {
        switch (type, keyClass) {
        case (.ellipticCurve, .public):
            guard let curve = EllipticCurve.of(x963Count: data.count, isPrivate: false), let key = try? curve.publicKey(x963: data) else {
                throw KeychainError.param("EC public key creation from data failed")
            }
            self.init(.ecPublic(key))
        case (.ellipticCurve, .private):
            guard let curve = EllipticCurve.of(x963Count: data.count, isPrivate: true), let key = try? curve.privateKey(x963: data) else {
                throw KeychainError.param("EC private key creation from data failed")
            }
            self.init(.ecPrivate(key))
        case (.rsa, .public):
            guard let key = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: data) else {
                throw KeychainError.param("RSA public key creation from data failed")
            }
            self.init(.rsaPublic(key))
        case (.rsa, .private):
            guard let key = try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: data) else {
                throw KeychainError.param("RSA private key creation from data failed")
            }
            self.init(.rsaPrivate(key))
        }
    }

    /// The private key a PKCS#8 `PrivateKeyInfo` holds (PKCS#12 files and OpenSSL keep
    /// keys so): RSA, or EC on one of the three curves; a PKCS#1 or SEC1 key is read too.
    ///
    /// - Throws: errSecUnsupportedKeyFormat for anything else (Apple imports only RSA and
    ///   EC keys from PKCS#12).
    public init(pkcs8 data: Data) throws(KeychainError) {
        if let key = try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: data) {
            self.init(.rsaPrivate(key))
            return
        }
        for curve in EllipticCurve.allCases {
            if let key = try? curve.privateKey(der: data) {
                self.init(.ecPrivate(key))
                return
            }
        }
        throw KeychainError(status: .unsupportedKeyFormat)
    }

    /// The private key as PKCS#8 DER (`security export`, PKCS#12 files); nil for a public
    /// key. Its bytes are its secret: callers hold them in zeroing storage.
    public var pkcs8Representation: Data? {
        switch storage {
        case .ecPrivate(let key): key.pkcs8Representation
        case .rsaPrivate(let key): key.pkcs8DERRepresentation
        case .ecPublic, .rsaPublic: nil
        }
    }

    // MARK: - What the key is

    public var type: KeyType {
        switch storage {
        case .ecPrivate, .ecPublic: .ellipticCurve
        case .rsaPrivate, .rsaPublic: .rsa
        }
    }

    public var keyClass: KeyClass {
        switch storage {
        case .ecPrivate, .rsaPrivate: .private
        case .ecPublic, .rsaPublic: .public
        }
    }

    /// `kSecAttrKeySizeInBits`: the curve's size or the modulus's.
    public var sizeInBits: Int {
        switch storage {
        case .ecPrivate(let key): key.curve.rawValue
        case .ecPublic(let key): key.curve.rawValue
        case .rsaPrivate(let key): key.keySizeInBits
        case .rsaPublic(let key): key.keySizeInBits
        }
    }

    /// `SecKeyGetBlockSize`: the modulus's bytes for RSA; for elliptic-curve keys, as
    /// Apple's `ccec_ctx_size`, the field's bytes.
    public var blockSize: Int { (sizeInBits + 7) / 8 }

    /// The public half (the key itself when it is public).
    public var publicKey: AsymmetricKey {
        switch storage {
        case .ecPrivate(let key): AsymmetricKey(.ecPublic(key.ecPublicKey))
        case .rsaPrivate(let key): AsymmetricKey(.rsaPublic(key.publicKey))
        case .ecPublic, .rsaPublic: self
        }
    }

    /// Apple's external representation: `04‖X‖Y` / `04‖X‖Y‖K`, PKCS#1 public or private.
    /// A private key's bytes are its secret: callers hold them in zeroing storage.
    public var externalRepresentation: Data {
        switch storage {
        case .ecPrivate(let key): key.x963Representation
        case .ecPublic(let key): key.x963Representation
        case .rsaPrivate(let key): key.derRepresentation
        case .rsaPublic(let key): key.pkcs1DERRepresentation
        }
    }

    /// The public key's bytes as Apple hashes them: the X9.63 point or PKCS#1 `RSAPublicKey`.
    public var publicKeyBytes: Data { publicKey.externalRepresentation }

    /// `kSecAttrApplicationLabel` of a key Apple stores: SHA-1 of ``publicKeyBytes``, which
    /// equals a certificate's `kSecAttrPublicKeyHash` for the same key.
    public var applicationLabel: Data { Data(Insecure.SHA1.hash(data: publicKeyBytes)) }

    /// Apple's name for the key's algorithm in descriptions: 1 for RSA, 3 for ECDSA.
    public var algorithmIdentifier: Int { type == .rsa ? 1 : 3 }

    /// A description without key material: what Apple's `SecKeyRef` description holds
    /// minus the coordinates.
    public var summary: String {
        let kind = (type == .rsa ? "RSA" : "EC") + (keyClass == .private ? "PrivateKey" : "PublicKey")
        return "algorithm id: \(algorithmIdentifier), key type: \(kind), version: 4, block size: \(sizeInBits) bits"
    }

    /// Whether two keys are the same key: same class and the same public key.
    public func isSame(as other: AsymmetricKey) -> Bool {
        keyClass == other.keyClass && type == other.type && publicKeyBytes == other.publicKeyBytes
    }
}
