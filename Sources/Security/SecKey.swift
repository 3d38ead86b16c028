import Foundation
import KeychainClient
import KeychainKeys
import KeychainModel

/// A cryptographic key (`SecKeyRef`): an RSA or elliptic-curve key, public or private, or
/// a private key in the enclave (`kSecAttrTokenIDSecureEnclave`).
///
/// Software keys do their work in the calling process, as Apple's do. An enclave key holds
/// only its public key and its blob: signing, decryption and key exchange run in the
/// enclave, which enforces its access control (asking the user, in the key's
/// authentication context, when it says so). Keys compare equal (`==`, `CFEqual`) when they
/// are the same key of the same class.
public final class SecKey: NSObject, @unchecked Sendable {
    // @unchecked: immutable after creation; AsymmetricKey is Sendable, NSObject is not marked.
    /// The key itself; for an enclave key, its public half.
    let key: AsymmetricKey
    /// An enclave key's blob (its private half is in the enclave).
    let enclave: EnclaveKeyBlob?
    /// `kSecUseAuthenticationContext` of an enclave key: the context its operations prove
    /// presence in; nil: a new one each time.
    let context: AuthenticationContext?

    init(_ key: AsymmetricKey) {
        self.key = key
        enclave = nil
        context = nil
    }

    /// An enclave key from its blob.
    init(enclave blob: EnclaveKeyBlob, context: AuthenticationContext?) throws(KeychainError) {
        key = try AsymmetricKey(externalRepresentation: blob.publicKey, type: .ellipticCurve, keyClass: .public)
        enclave = blob
        self.context = context
    }

    /// Whether it is a private key (in this process or in the enclave).
    var isPrivate: Bool { enclave != nil || key.keyClass == .private }

    /// `kSecAttrApplicationLabel`: SHA-1 of the public key's bytes.
    var applicationLabel: Data { key.applicationLabel }

    /// The attributes `SecKeyCopyAttributes` reports; an enclave key's say where it is
    /// (`kSecAttrTokenID`) and that it can be neither read nor exported.
    var attributes: [String: KeychainValue] {
        guard let enclave else { return key.attributes }
        var attributes = key.attributes
        let capabilities: [(String, Bool)] = [
            (SecName.kSecAttrCanEncrypt, false), (SecName.kSecAttrCanDecrypt, true), (SecName.kSecAttrCanDerive, true),
            (SecName.kSecAttrCanSign, true), (SecName.kSecAttrCanVerify, false), (SecName.kSecAttrCanWrap, false),
            (SecName.kSecAttrCanUnwrap, true), (SecName.kSecAttrIsSensitive, true), (SecName.kSecAttrIsExtractable, false),
            ("priv", true), ("asen", true), ("next", true),
        ]
        for (name, value) in capabilities { attributes[name] = .bool(value) }
        attributes[SecName.kSecAttrKeyClass] = .string(AsymmetricKey.KeyClass.private.attributeValue)
        attributes[SecName.kSecAttrTokenID] = .string(EnclaveKeyBlob.tokenID)
        attributes[SecName.kSecValueData] = .data(enclave.data)
        return attributes
    }

    /// What a key item made from it holds: its attributes and bytes (an enclave key's blob,
    /// in its own ThisDeviceOnly class).
    var itemAttributes: [String: KeychainValue] {
        var attributes = self.attributes
        if let enclave { attributes[SecName.kSecAttrAccessible] = .string(enclave.protection.rawValue) }
        return attributes
    }

    var summary: String {
        guard enclave != nil else { return key.summary }
        return "algorithm id: 3, key type: ECPrivateKey, version: 4, block size: 256 bits, token: \(EnclaveKeyBlob.tokenID)"
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecKey else { return false }
        switch (enclave, other.enclave) {
        case (nil, nil): return key.isSame(as: other.key)
        case (let mine?, let theirs?): return mine.keyID == theirs.keyID
        default: return false
        }
    }

    public override var hash: Int { key.applicationLabel.hashValue }

    /// As Apple's description, without key material.
    public override var description: String {
        "<SecKeyRef \(summary), addr: 0x\(String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16))>"
    }
}

// MARK: - Creating keys

/// Generates a key pair and returns its private key (`SecKeyCreateRandomKey`).
///
/// `parameters` needs `kSecAttrKeyType` (`kSecAttrKeyTypeRSA`, `kSecAttrKeyTypeECSECPrimeRandom`)
/// and `kSecAttrKeySizeInBits` (RSA 1024–8192; EC 256, 384, 521). Attributes for each half
/// may sit at the top level or in `kSecPrivateKeyAttrs` / `kSecPublicKeyAttrs` (which win);
/// a half whose attributes say `kSecAttrIsPermanent: true` is stored in the keychain.
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    do throws(KeychainError) {
        if let token = parameters[kSecAttrTokenID as String] {
            guard token as? String == kSecAttrTokenIDSecureEnclave as String else {
                throw KeychainError(status: .itemNotFound, message: "token \(token) not found")
            }
            return try EnclaveKeys.create(parameters)
        }
        guard let type = KeyParameters.keyType(parameters[kSecAttrKeyType as String]) else {
            throw KeychainError.param("incorrect or missing kSecAttrKeyType in key generation request")
        }
        guard let bits = KeyParameters.integer(parameters[kSecAttrKeySizeInBits as String]) else {
            throw KeychainError.param("missing kSecAttrKeySizeInBits in key generation request")
        }
        let privateKey = try AsymmetricKey.generate(type, bits: bits)
        let privateAttributes = KeyParameters.merged(parameters, half: kSecPrivateKeyAttrs as String)
        let publicAttributes = KeyParameters.merged(parameters, half: kSecPublicKeyAttrs as String)
        if KeyParameters.isPermanent(publicAttributes) {
            try KeyParameters.store(SecKey(privateKey.publicKey), attributes: publicAttributes)
        }
        if KeyParameters.isPermanent(privateAttributes) {
            try KeyParameters.store(SecKey(privateKey), attributes: privateAttributes)
        }
        return SecKey(privateKey)
    } catch let failure {
        failure.report(to: error)
        return nil
    }
}

/// A key from its external representation (`SecKeyCreateWithData`); not stored.
///
/// `attributes` needs `kSecAttrKeyType` and `kSecAttrKeyClass`. EC keys are ANSI X9.63
/// (`04‖X‖Y`, private `04‖X‖Y‖K`); RSA keys PKCS#1, public keys also X.509 SPKI.
public func SecKeyCreateWithData(_ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    do throws(KeychainError) {
        guard let type = KeyParameters.keyType(attributes[kSecAttrKeyType as String]) else {
            throw KeychainError.param("Unsupported key type: \(attributes[kSecAttrKeyType as String] ?? "(null)")")
        }
        guard let keyClass = KeyParameters.keyClass(attributes[kSecAttrKeyClass as String]) else {
            throw KeychainError.param("Unsupported key class: \(attributes[kSecAttrKeyClass as String] ?? "(null)")")
        }
        return SecKey(try AsymmetricKey(externalRepresentation: keyData as Data, type: type, keyClass: keyClass))
    } catch let failure {
        failure.report(to: error)
        return nil
    }
}

/// The public key of `key` (`SecKeyCopyPublicKey`): itself when it is public.
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    key.isPrivate ? SecKey(key.key.publicKey) : key
}

/// The key's external representation (`SecKeyCopyExternalRepresentation`).
/// An enclave key's private half cannot be exported: errSecUnimplemented, as Apple's key
/// classes without an export say.
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    guard key.enclave == nil else {
        KeychainError(status: .unimplemented, message: "export not implemented for key \(key)").report(to: error)
        return nil
    }
    return NSData(data: key.key.externalRepresentation)
}

/// The key's attributes (`SecKeyCopyAttributes`), as Apple's software keys report them.
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    FoundationBridge.object(.dictionary(key.attributes)) as? NSDictionary
}

/// The block size in bytes (`SecKeyGetBlockSize`): the modulus for RSA, the field for EC.
public func SecKeyGetBlockSize(_ key: SecKey) -> Int {
    key.key.blockSize
}

/// Whether `key` can do `operation` with `algorithm` (`SecKeyIsAlgorithmSupported`).
public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm) -> Bool {
    guard let known = KeyAlgorithm(algorithm.rawValue as String), let operation = KeyOperation(rawValue: operation.rawValue) else { return false }
    if key.enclave != nil, [.sign, .decrypt, .keyExchange].contains(operation) { return EnclaveKeys.privateKeyShape.supports(operation, known) }
    return key.key.supports(operation, known)
}

// MARK: - Operations

/// Signs `dataToSign` with a private key (`SecKeyCreateSignature`).
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    perform(key, algorithm, .sign, error) { software, known, name throws(KeychainError) in
        if let blob = key.enclave { return try EnclaveKeys.use(key, blob, .sign(algorithm: name, data: dataToSign as Data)) }
        return NSData(data: try software.signature(known, name: name, for: dataToSign as Data))
    }
}

/// Verifies `signature` over `signedData` with a public key (`SecKeyVerifySignature`):
/// false with errSecVerifyFailed when it does not match.
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    perform(key, algorithm, .verify, error) { key, known, name throws(KeychainError) in
        try key.verify(known, name: name, signature: signature as Data, for: signedData as Data)
    } ?? false
}

/// Encrypts `plaintext` with a public key (`SecKeyCreateEncryptedData`).
public func SecKeyCreateEncryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    perform(key, algorithm, .encrypt, error) { key, known, name throws(KeychainError) in
        NSData(data: try key.encrypt(known, name: name, plaintext as Data))
    }
}

/// Decrypts `ciphertext` with a private key (`SecKeyCreateDecryptedData`).
public func SecKeyCreateDecryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    perform(key, algorithm, .decrypt, error) { software, known, name throws(KeychainError) in
        if let blob = key.enclave { return try EnclaveKeys.use(key, blob, .decrypt(algorithm: name, data: ciphertext as Data)) }
        return NSData(data: try software.decrypt(known, name: name, ciphertext as Data))
    }
}

/// ECDH between a private key and a public key (`SecKeyCopyKeyExchangeResult`); with an
/// `…X963…` algorithm, `parameters` gives `requestedSize` and optionally `sharedInfo`.
public func SecKeyCopyKeyExchangeResult(
    _ privateKey: SecKey, _ algorithm: SecKeyAlgorithm, _ publicKey: SecKey, _ parameters: CFDictionary,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    perform(privateKey, algorithm, .keyExchange, error) { key, known, name throws(KeychainError) in
        let size = parameters[SecKeyKeyExchangeParameter.requestedSize.rawValue as String]
        let sharedInfo = parameters[SecKeyKeyExchangeParameter.sharedInfo.rawValue as String]
        if sharedInfo != nil, !(sharedInfo is Data) {
            throw KeychainError.param("ECDHKeyExchange wrong sharedInfo type (must be CFData/NSData)")
        }
        if let blob = privateKey.enclave {
            guard publicKey.key.type == .ellipticCurve else { throw KeychainError.param("ECDH: the other key is not an elliptic-curve key") }
            return try EnclaveKeys.use(
                privateKey, blob,
                .keyExchange(
                    algorithm: name, publicKey: publicKey.key.publicKeyBytes, requestedSize: KeyParameters.integer(size),
                    sharedInfo: sharedInfo as? Data))
        }
        return NSData(
            data: try key.keyExchange(
                known, name: name, with: publicKey.key, requestedSize: KeyParameters.integer(size), sharedInfo: sharedInfo as? Data))
    }
}

/// Runs an operation: Apple's errSecParam for an algorithm it does not know, the
/// operation's own error otherwise, reported through `error`.
private func perform<Result>(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ operation: KeyOperation, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?,
    _ body: (AsymmetricKey, KeyAlgorithm, String) throws(KeychainError) -> Result
) -> Result? {
    let name = algorithm.rawValue as String
    do throws(KeychainError) {
        guard let known = KeyAlgorithm(name) else {
            throw KeychainError.param("\(name): algorithm not supported by the key \(key)")
        }
        return try body(key.key, known, name)
    } catch let failure {
        failure.report(to: error)
        return nil
    }
}

// MARK: - Type identifiers

/// `SecKeyGetTypeID`.
public func SecKeyGetTypeID() -> CFTypeID { CoreFoundationType.secKey.rawValue }
