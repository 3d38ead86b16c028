import Crypto
import FoundationEssentials
import KeychainCrypto
import KeychainKeys
import KeychainModel

// Enclave keys (Apple's Secure Enclave keys): P-256 private keys made and used only here.
// Each is wrapped like an item key — under its class, with its access control bound in —
// but by a key derived from the class key for this purpose alone (ClassKey
// .enclaveKeyWrapping), so the requests that unwrap item keys for securityd cannot open it.

extension SoftwareKeybag {
    /// A new P-256 key, wrapped for `protection` with `access` (which must be satisfiable,
    /// as an item's).
    public func createEnclaveKey(protection: ProtectionClass, access: AccessControl?, context: Data?) throws -> EnclaveKeyBlob {
        let keyID = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        // What the class key wraps: the scalar, or — on a TPM, where the key is made and stays —
        // the key's random authValue.
        let secret: ItemKey
        var blob: EnclaveKeyBlob
        if let tpm = deviceKey as? TPMDeviceKey {
            secret = ItemKey.generate()
            let (tpmKey, publicKey) = try tpm.createP256Key(auth: secret.secretBytes)
            blob = EnclaveKeyBlob(protection: protection, keyID: keyID, publicKey: publicKey, access: nil, wrapped: Data(), tpmKey: tpmKey)
        } else {
            var privateKey = P256.Signing.PrivateKey()
            #if TROUSSEAU_TEST_HOOKS
            if let seed = configuration.testEnclaveKeySeed {
                privateKey = try P256.Signing.PrivateKey(rawRepresentation: Self.testScalar(seed: seed, keyID: keyID))
            }
            #endif
            secret = try ItemKey(bytes: SecretBytes(privateKey.rawRepresentation))
            blob = EnclaveKeyBlob(
                protection: protection, keyID: keyID, publicKey: privateKey.publicKey.x963Representation, access: nil, wrapped: Data())
        }
        let (wrapped, bound) = try wrap(
            secret, for: protection, associatedData: blob.associatedData, access: access, context: context
        ) { $0.enclaveKeyWrapping() }
        blob.wrapped = wrapped
        blob.access = bound
        return blob
    }

    /// Runs `operation` with the key `blob` holds, once its class is available and
    /// `context` has proven what its access control asks (the same proofs as for an item:
    /// bound to this key's operation, or reusable).
    ///
    /// - Throws: `errSecDecode` for a blob that is not one of this keybag's keys (or was
    ///   altered); `errSecInteractionNotAllowed` when the class is locked;
    ///   `errSecAuthNeeded` without the proofs; the operation's own errors (Apple's).
    public func useEnclaveKey(_ blob: EnclaveKeyBlob, _ operation: EnclaveKeyOperation, context: Data?) throws -> SecretBytes {
        let unwrapped = try unwrap(blob.wrapped, for: blob.protection, associatedData: blob.associatedData, access: blob.access, context: context) {
            $0.enclaveKeyWrapping()
        }
        let key: AsymmetricKey
        if let tpmKey = blob.tpmKey {
            guard let tpm = deviceKey as? TPMDeviceKey else { throw KeychainError.decode("the enclave key is in a TPM, and this keychain's device key is not") }
            let authValue = unwrapped.secretBytes
            key = try AsymmetricKey(
                heldP256: blob.publicKey, signDigest: { try tpm.sign(key: tpmKey, auth: authValue, digest: $0) },
                agree: { try tpm.keyExchange(key: tpmKey, auth: authValue, peer: $0) })
        } else {
            key = try unwrapped.secretBytes.withUnsafeBytes { raw in
                var x963 = blob.publicKey
                x963.append(contentsOf: raw)
                defer { x963.resetBytes(in: 0..<x963.count) }
                return try AsymmetricKey(externalRepresentation: x963, type: .ellipticCurve, keyClass: .private)
            }
        }
        // The wrapping authenticated the public key with the private one: they are one pair.
        guard key.publicKeyBytes == blob.publicKey else { throw KeychainError.decode("the enclave key does not match its public key") }
        let output: Data
        switch operation {
        case .sign(let name, let data):
            output = try key.signature(try Self.algorithm(name, key), name: name, for: data)
        case .decrypt(let name, let data):
            output = try key.decrypt(try Self.algorithm(name, key), name: name, data)
        case .keyExchange(let name, let publicKey, let size, let sharedInfo):
            let other = try AsymmetricKey(externalRepresentation: publicKey, type: .ellipticCurve, keyClass: .public)
            output = try key.keyExchange(try Self.algorithm(name, key), name: name, with: other, requestedSize: size, sharedInfo: sharedInfo)
        }
        return SecretBytes(output)
    }

    #if TROUSSEAU_TEST_HOOKS
    /// The test builds' derived key: HKDF-SHA256(seed, info: key id), 32 bytes.
    public static func testScalar(seed: Data, keyID: Data) -> Data {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: seed), info: keyID, outputByteCount: 32).withUnsafeBytes { Data($0) }
    }
    #endif

    private static func algorithm(_ name: String, _ key: AsymmetricKey) throws(KeychainError) -> KeyAlgorithm {
        guard let known = KeyAlgorithm(name) else { throw KeychainError.param("\(name): algorithm not supported by the key <SecKeyRef \(key.summary)>") }
        return known
    }
}
