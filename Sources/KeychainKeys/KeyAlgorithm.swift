/// One of Apple's `SecKeyAlgorithm` values, understood: which operation it is for, on
/// which key type, with which padding, digest and key derivation.
///
/// The raw values are Apple's strings (`SecKeyAdaptors.m`); ``init(_:)`` takes them and
/// nothing else, so an algorithm Apple does not have is refused the way an unsupported one
/// is, with errSecParam.
public enum KeyAlgorithm: Sendable, Hashable {
    /// ECDSA over `digest` (nil: the input already is a digest of any length), in X9.62
    /// DER or RFC 4754 (r‖s) encoding, over the message or a digest of it.
    case ecdsa(encoding: SignatureEncoding, input: SignatureInput, digest: DigestAlgorithm?)
    /// RSA PKCS#1 v1.5 or PSS (salt = digest length) with `digest`.
    case rsaSignature(padding: RSASignaturePadding, input: SignatureInput, digest: DigestAlgorithm)
    /// RSA encryption: PKCS#1 v1.5 or OAEP with `digest` (MGF1 with the same digest),
    /// or OAEP wrapping an AES-GCM key (`aesGCM`).
    case rsaEncryption(padding: RSAEncryptionPadding, aesGCM: Bool)
    /// ECIES: an ephemeral key, ECDH (cofactor or standard), X9.63 KDF, AES-GCM; the IV
    /// derived by the KDF (`variableIV`) or sixteen zero bytes.
    case ecies(cofactor: Bool, kdfDigest: DigestAlgorithm, variableIV: Bool)
    /// ECDH, with an X9.63 KDF over `kdfDigest` or the raw shared secret.
    case ecdh(cofactor: Bool, kdfDigest: DigestAlgorithm?)

    public enum SignatureEncoding: Sendable, Hashable { case x962, rfc4754 }
    public enum SignatureInput: Sendable, Hashable { case message, digest }
    public enum RSASignaturePadding: Sendable, Hashable { case pkcs1v15, pss }
    public enum RSAEncryptionPadding: Sendable, Hashable {
        case pkcs1
        case oaep(DigestAlgorithm)
    }

    /// What the algorithm does.
    public var operation: KeyOperation {
        switch self {
        case .ecdsa, .rsaSignature: .sign
        case .rsaEncryption, .ecies: .encrypt
        case .ecdh: .keyExchange
        }
    }

    /// Apple's string for the algorithm.
    public var name: String { Self.names[self] ?? "" }

    /// The algorithm Apple names `name`, or nil for one it does not have.
    public init?(_ name: String) {
        guard let algorithm = Self.byName[name] else { return nil }
        self = algorithm
    }

    static let byName: [String: KeyAlgorithm] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.algorithm) })
    static let names: [KeyAlgorithm: String] = Dictionary(all.map { ($0.algorithm, $0.name) }) { first, _ in first }

    /// Every algorithm of Apple's list that names an RSA or elliptic-curve operation,
    /// with its string. (Raw RSA, MD5, EdDSA and the KEMs are not here: not offered.)
    public static let all: [(name: String, algorithm: KeyAlgorithm)] = {
        var list: [(String, KeyAlgorithm)] = []
        let digests: [(String, DigestAlgorithm)] = [("SHA1", .sha1), ("SHA224", .sha224), ("SHA256", .sha256), ("SHA384", .sha384), ("SHA512", .sha512)]
        for (text, digest) in digests {
            list.append(("algid:sign:RSA:digest-PKCS1v15:\(text)", .rsaSignature(padding: .pkcs1v15, input: .digest, digest: digest)))
            list.append(("algid:sign:RSA:message-PKCS1v15:\(text)", .rsaSignature(padding: .pkcs1v15, input: .message, digest: digest)))
            let salt = "\(text):\(text):\(digest.byteCount)"
            list.append(("algid:sign:RSA:digest-PSS:\(salt)", .rsaSignature(padding: .pss, input: .digest, digest: digest)))
            list.append(("algid:sign:RSA:message-PSS:\(salt)", .rsaSignature(padding: .pss, input: .message, digest: digest)))
            list.append(("algid:sign:ECDSA:digest-RFC4754:\(text)", .ecdsa(encoding: .rfc4754, input: .digest, digest: digest)))
            list.append(("algid:sign:ECDSA:message-RFC4754:\(text)", .ecdsa(encoding: .rfc4754, input: .message, digest: digest)))
            list.append(("algid:sign:ECDSA:digest-X962:\(text)", .ecdsa(encoding: .x962, input: .digest, digest: digest)))
            list.append(("algid:sign:ECDSA:message-X962:\(text)", .ecdsa(encoding: .x962, input: .message, digest: digest)))
            list.append(("algid:encrypt:RSA:OAEP:\(text)", .rsaEncryption(padding: .oaep(digest), aesGCM: false)))
            list.append(("algid:encrypt:RSA:OAEP:\(text):AESGCM", .rsaEncryption(padding: .oaep(digest), aesGCM: true)))
            for (ecdh, cofactor) in [("ECDH", false), ("ECDHC", true)] {
                list.append(("algid:encrypt:ECIES:\(ecdh):KDFX963:\(text):AESGCM", .ecies(cofactor: cofactor, kdfDigest: digest, variableIV: false)))
                if digest != .sha1 {  // Apple has no variable-IV SHA-1 variant
                    list.append(("algid:encrypt:ECIES:\(ecdh):KDFX963:\(text):AESGCM-KDFIV", .ecies(cofactor: cofactor, kdfDigest: digest, variableIV: true)))
                }
                list.append(("algid:keyexchange:\(ecdh):KDFX963:\(text)", .ecdh(cofactor: cofactor, kdfDigest: digest)))
            }
        }
        list.append(("algid:sign:ECDSA:RFC4754", .ecdsa(encoding: .rfc4754, input: .digest, digest: nil)))
        list.append(("algid:sign:ECDSA:digest-RFC4754", .ecdsa(encoding: .rfc4754, input: .digest, digest: nil)))
        list.append(("algid:sign:ECDSA:digest-X962", .ecdsa(encoding: .x962, input: .digest, digest: nil)))
        list.append(("algid:encrypt:RSA:PKCS1", .rsaEncryption(padding: .pkcs1, aesGCM: false)))
        list.append(("algid:keyexchange:ECDH", .ecdh(cofactor: false, kdfDigest: nil)))
        list.append(("algid:keyexchange:ECDHC", .ecdh(cofactor: true, kdfDigest: nil)))
        return list
    }()
}

/// What a key is asked to do: Apple's `SecKeyOperationType`, with its raw values.
public enum KeyOperation: Int, Sendable, Hashable {
    case encrypt = 0
    case decrypt = 1
    case sign = 2
    case verify = 3
    case keyExchange = 4
}

/// A digest an algorithm names.
public enum DigestAlgorithm: Sendable, Hashable {
    case sha1, sha224, sha256, sha384, sha512

    /// The digest's length in bytes.
    public var byteCount: Int {
        switch self {
        case .sha1: 20
        case .sha224: 28
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }
}
