import Crypto
import FoundationEssentials

/// A NIST prime curve Apple's keys use (`kSecAttrKeyTypeECSECPrimeRandom`), by its size.
public enum EllipticCurve: Int, Sendable, Hashable, CaseIterable {
    case p256 = 256
    case p384 = 384
    case p521 = 521

    /// The curve of a key of `bits` (`kSecAttrKeySizeInBits`).
    public init?(bits: Int) { self.init(rawValue: bits) }

    /// The bytes of a field element (a coordinate, the private scalar).
    public var fieldByteCount: Int { (rawValue + 7) / 8 }

    /// The length of an uncompressed public point, `04‖X‖Y`.
    public var publicKeyByteCount: Int { 1 + 2 * fieldByteCount }

    /// The curve whose X9.63 public point or private key is `count` bytes long.
    static func of(x963Count count: Int, isPrivate: Bool) -> EllipticCurve? {
        allCases.first { ($0.publicKeyByteCount + (isPrivate ? $0.fieldByteCount : 0)) == count }
    }

    func generate() -> any ECPrivateKey {
        switch self {
        case .p256: P256.Signing.PrivateKey()
        case .p384: P384.Signing.PrivateKey()
        case .p521: P521.Signing.PrivateKey()
        }
    }

    func privateKey(x963 bytes: Data) throws -> any ECPrivateKey {
        switch self {
        case .p256: try P256.Signing.PrivateKey(x963Representation: bytes)
        case .p384: try P384.Signing.PrivateKey(x963Representation: bytes)
        case .p521: try P521.Signing.PrivateKey(x963Representation: bytes)
        }
    }

    /// A PKCS#8 or SEC1 private key on this curve.
    func privateKey(der bytes: Data) throws -> any ECPrivateKey {
        switch self {
        case .p256: try P256.Signing.PrivateKey(derRepresentation: bytes)
        case .p384: try P384.Signing.PrivateKey(derRepresentation: bytes)
        case .p521: try P521.Signing.PrivateKey(derRepresentation: bytes)
        }
    }

    func publicKey(x963 bytes: Data) throws -> any ECPublicKey {
        switch self {
        case .p256: try P256.Signing.PublicKey(x963Representation: bytes)
        case .p384: try P384.Signing.PublicKey(x963Representation: bytes)
        case .p521: try P521.Signing.PublicKey(x963Representation: bytes)
        }
    }
}

/// What Trousseau asks of a private key on any of the three curves.
protocol ECPrivateKey: Sendable {
    var curve: EllipticCurve { get }
    /// `04‖X‖Y‖K`.
    var x963Representation: Data { get }
    /// PKCS#8 `PrivateKeyInfo`.
    var pkcs8Representation: Data { get }
    var ecPublicKey: any ECPublicKey { get }
    /// The signature over a digest, DER (X9.62) and raw (r‖s).
    func sign(digest: some Digest) throws -> (der: Data, raw: Data)
    /// The ECDH shared secret (the x coordinate) with the public point `04‖X‖Y`.
    func sharedSecret(with publicX963: Data) throws -> SymmetricKey
}

/// What Trousseau asks of a public key on any of the three curves.
protocol ECPublicKey: Sendable {
    var curve: EllipticCurve { get }
    /// `04‖X‖Y`.
    var x963Representation: Data { get }
    func isValid(der: Data, digest: some Digest) -> Bool
    func isValid(raw: Data, digest: some Digest) -> Bool
}

extension P256.Signing.PrivateKey: ECPrivateKey {
    var pkcs8Representation: Data { derRepresentation }
    var curve: EllipticCurve { .p256 }
    var ecPublicKey: any ECPublicKey { publicKey }
    func sign(digest: some Digest) throws -> (der: Data, raw: Data) {
        let signature = try signature(for: digest)
        return (signature.derRepresentation, signature.rawRepresentation)
    }
    func sharedSecret(with publicX963: Data) throws -> SymmetricKey {
        try P256.KeyAgreement.PrivateKey(rawRepresentation: rawRepresentation)
            .sharedSecretFromKeyAgreement(with: P256.KeyAgreement.PublicKey(x963Representation: publicX963))
            .withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

extension P256.Signing.PublicKey: ECPublicKey {
    var curve: EllipticCurve { .p256 }
    func isValid(der: Data, digest: some Digest) -> Bool {
        (try? P256.Signing.ECDSASignature(derRepresentation: der)).map { isValidSignature($0, for: digest) } ?? false
    }
    func isValid(raw: Data, digest: some Digest) -> Bool {
        (try? P256.Signing.ECDSASignature(rawRepresentation: raw)).map { isValidSignature($0, for: digest) } ?? false
    }
}

extension P384.Signing.PrivateKey: ECPrivateKey {
    var pkcs8Representation: Data { derRepresentation }
    var curve: EllipticCurve { .p384 }
    var ecPublicKey: any ECPublicKey { publicKey }
    func sign(digest: some Digest) throws -> (der: Data, raw: Data) {
        let signature = try signature(for: digest)
        return (signature.derRepresentation, signature.rawRepresentation)
    }
    func sharedSecret(with publicX963: Data) throws -> SymmetricKey {
        try P384.KeyAgreement.PrivateKey(rawRepresentation: rawRepresentation)
            .sharedSecretFromKeyAgreement(with: P384.KeyAgreement.PublicKey(x963Representation: publicX963))
            .withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

extension P384.Signing.PublicKey: ECPublicKey {
    var curve: EllipticCurve { .p384 }
    func isValid(der: Data, digest: some Digest) -> Bool {
        (try? P384.Signing.ECDSASignature(derRepresentation: der)).map { isValidSignature($0, for: digest) } ?? false
    }
    func isValid(raw: Data, digest: some Digest) -> Bool {
        (try? P384.Signing.ECDSASignature(rawRepresentation: raw)).map { isValidSignature($0, for: digest) } ?? false
    }
}

extension P521.Signing.PrivateKey: ECPrivateKey {
    var pkcs8Representation: Data { derRepresentation }
    var curve: EllipticCurve { .p521 }
    var ecPublicKey: any ECPublicKey { publicKey }
    func sign(digest: some Digest) throws -> (der: Data, raw: Data) {
        let signature = try signature(for: digest)
        return (signature.derRepresentation, signature.rawRepresentation)
    }
    func sharedSecret(with publicX963: Data) throws -> SymmetricKey {
        try P521.KeyAgreement.PrivateKey(rawRepresentation: rawRepresentation)
            .sharedSecretFromKeyAgreement(with: P521.KeyAgreement.PublicKey(x963Representation: publicX963))
            .withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

extension P521.Signing.PublicKey: ECPublicKey {
    var curve: EllipticCurve { .p521 }
    func isValid(der: Data, digest: some Digest) -> Bool {
        (try? P521.Signing.ECDSASignature(derRepresentation: der)).map { isValidSignature($0, for: digest) } ?? false
    }
    func isValid(raw: Data, digest: some Digest) -> Bool {
        (try? P521.Signing.ECDSASignature(rawRepresentation: raw)).map { isValidSignature($0, for: digest) } ?? false
    }
}

/// A digest the caller computed: ECDSA signs any bytes as the digest (truncated to the
/// curve's order as the standard says), which Apple's `…Digest…` algorithms need.
struct PrecomputedDigest: Digest {
    static var byteCount: Int { 64 }
    let bytes: [UInt8]

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    var description: String { "digest of \(bytes.count) bytes" }
}
