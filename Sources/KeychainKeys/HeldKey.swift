import Crypto
public import FoundationEssentials
public import KeychainModel

/// A P-256 private key whose scalar another device holds — the TPM 2.0 an enclave key was
/// made in — and never shows: its signatures and ECDH agreements are asked of the holder,
/// and everything around them (digests, DER, the X9.63 KDF, ECIES) runs here as for a
/// software key, so a held key answers every `SecKey` operation byte for byte as one.
struct HeldP256Key: ECPrivateKey {
    let publicKey: P256.Signing.PublicKey
    /// ECDSA over a 32-byte digest: r ‖ s.
    let signDigest: @Sendable (Data) throws -> Data
    /// ECDH with a public point `04‖X‖Y`: the shared x coordinate.
    let agree: @Sendable (Data) throws -> SecretBytes

    var curve: EllipticCurve { .p256 }
    var ecPublicKey: any ECPublicKey { publicKey }
    /// Nothing: the scalar is not here to represent (an enclave key is never exported).
    var x963Representation: Data { Data() }
    var pkcs8Representation: Data { Data() }

    func sign(digest: some Digest) throws -> (der: Data, raw: Data) {
        // ECDSA on P-256 uses the digest's leftmost 256 bits; a shorter one is the same
        // integer left-padded with zeros.
        var bytes = digest.withUnsafeBytes { Data($0) }
        bytes = bytes.count >= 32 ? bytes.prefix(32) : Data(repeating: 0, count: 32 - bytes.count) + bytes
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try signDigest(bytes))
        guard publicKey.isValidSignature(signature, for: digest) else { throw KeychainError.decode("the TPM's signature does not verify") }
        return (signature.derRepresentation, signature.rawRepresentation)
    }

    func sharedSecret(with publicX963: Data) throws -> SymmetricKey {
        _ = try P256.KeyAgreement.PublicKey(x963Representation: publicX963)  // a point on the curve, or nothing is asked
        return try agree(publicX963).withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

extension AsymmetricKey {
    /// A P-256 private key held by another device (a TPM), with its public key `04‖X‖Y`
    /// and the two operations only the holder can do.
    ///
    /// - Throws: errSecParam when `publicKey` is not a P-256 point.
    public init(
        heldP256 publicKey: Data, signDigest: @escaping @Sendable (Data) throws -> Data, agree: @escaping @Sendable (Data) throws -> SecretBytes
    ) throws(KeychainError) {
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw KeychainError.param("EC public key creation from data failed")
        }
        self.init(.ecPrivate(HeldP256Key(publicKey: key, signDigest: signDigest, agree: agree)))
    }
}
