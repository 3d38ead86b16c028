import Foundation
import KeychainClient
import KeychainKeys
import KeychainModel

/// `SecKeyCreateRandomKey` with `kSecAttrTokenIDSecureEnclave`, and the operations of the
/// keys it makes, which run in the enclave.
enum EnclaveKeys {
    /// A P-256 private key standing for an enclave key where only its shape matters
    /// (`SecKeyIsAlgorithmSupported`).
    static let privateKeyShape: AsymmetricKey = {
        guard let key = try? AsymmetricKey.generate(.ellipticCurve, bits: 256) else { preconditionFailure("P-256 key generation failed") }
        return key
    }()

    /// Makes the key in the enclave: P-256 only, as Apple's Secure Enclave. Its protection
    /// is the private attributes' access control's or `kSecAttrAccessible`'s (default
    /// WhenUnlocked), always in its ThisDeviceOnly form; its access control (with
    /// `.privateKeyUsage`, and any of the presence flags) is enforced by the enclave.
    /// `kSecAttrIsPermanent` in the private attributes stores the key as an item (its blob,
    /// without the access control, which the blob carries), the public attributes' the
    /// public key.
    static func create(_ parameters: CFDictionary) throws(KeychainError) -> SecKey {
        guard KeyParameters.keyType(parameters[kSecAttrKeyType as String]) == .ellipticCurve,
            KeyParameters.integer(parameters[kSecAttrKeySizeInBits as String]) == 256
        else {
            throw KeychainError.param("Key generation failed: the Secure Enclave makes only 256-bit elliptic-curve (P-256) keys")
        }
        var privateAttributes = KeyParameters.merged(parameters, half: kSecPrivateKeyAttrs as String)
        let publicAttributes = KeyParameters.merged(parameters, half: kSecPublicKeyAttrs as String)
        var protection = ProtectionClass.whenUnlocked
        var access: AccessControl?
        if let value = privateAttributes[kSecAttrAccessControl as String] {
            guard let control = value as? SecAccessControl else { throw KeychainError.param("the value of accc is not a SecAccessControl") }
            protection = control.accessControl.protection
            access = control.accessControl
        } else if let value = privateAttributes[kSecAttrAccessible as String] {
            guard let name = value as? String, let named = ProtectionClass(rawValue: name) else {
                throw KeychainError.param("invalid kSecAttrAccessible: \(value)")
            }
            protection = named
        }
        protection = protection.thisDeviceOnly
        if let current = access, current.protection != protection {
            do {
                access = try AccessControl(protection: protection, flags: current.flags)
            } catch {
                throw KeychainError.param("the access control cannot be made ThisDeviceOnly")
            }
        }
        var context: AuthenticationContext?
        if let value = privateAttributes[kSecUseAuthenticationContext as String] {
            guard let provider = value as? any AuthenticationContextProviding else { throw KeychainError.param("the value of u_AuthCtx is not an LAContext") }
            context = provider.authenticationContext
        }
        let blob = try ProcessKeychain.keychain.createEnclaveKey(protection: protection, access: access, context: context)
        let key = try SecKey(enclave: EnclaveKeyBlob(data: blob), context: context)
        if KeyParameters.isPermanent(publicAttributes) {
            try KeyParameters.store(SecKey(key.key), attributes: publicAttributes)
        }
        if KeyParameters.isPermanent(privateAttributes) {
            privateAttributes[kSecAttrAccessControl as String] = nil
            privateAttributes[kSecAttrAccessible as String] = nil
            privateAttributes[kSecUseAuthenticationContext as String] = nil
            try KeyParameters.store(key, attributes: privateAttributes)
        }
        return key
    }

    /// Runs an operation of an enclave key in the enclave, in the key's context.
    static func use(_ key: SecKey, _ blob: EnclaveKeyBlob, _ operation: EnclaveKeyOperation) throws(KeychainError) -> NSData {
        let output = try ProcessKeychain.keychain.useEnclaveKey(blob.data, operation, context: key.context, prompt: nil)
        return output.withUnsafeBytes { NSData(bytes: $0.baseAddress, length: $0.count) }
    }
}

extension ProtectionClass {
    /// The class with the same availability that never leaves the device.
    var thisDeviceOnly: ProtectionClass {
        switch self {
        case .whenUnlocked: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlock: .afterFirstUnlockThisDeviceOnly
        case .always: .alwaysThisDeviceOnly
        default: self
        }
    }
}
