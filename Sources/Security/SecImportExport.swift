import Foundation
import KeychainCertificates
import KeychainKeys
import KeychainModel
import KeychainProtocol

// SecImportExport.h: reading PKCS#12 files. The keys' values are Apple's (SecName).

/// `kSecImportExportPassphrase`: the file's password (a string; none is the empty string).
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = NSString(string: SecName.kSecImportExportPassphrase)
/// `kSecImportToMemoryOnly`: accepted; importing is to memory unless
/// `kSecUseDataProtectionKeychain` asks otherwise.
nonisolated(unsafe) public let kSecImportToMemoryOnly: CFString = NSString(string: SecName.kSecImportToMemoryOnly)
/// `kSecImportExportKeychain` (macOS): the `SecKeychain` the identities are added to.
nonisolated(unsafe) public let kSecImportExportKeychain: CFString = NSString(string: SecName.kSecImportExportKeychain)
/// The subject summary of an imported identity's certificate.
nonisolated(unsafe) public let kSecImportItemLabel: CFString = NSString(string: SecName.kSecImportItemLabel)
/// SHA-1 of an imported identity's public key (its key's `kSecAttrApplicationLabel`).
nonisolated(unsafe) public let kSecImportItemKeyID: CFString = NSString(string: SecName.kSecImportItemKeyID)
/// A `SecTrust` for the identity's certificate with the basic X.509 policy, evaluated.
nonisolated(unsafe) public let kSecImportItemTrust: CFString = NSString(string: SecName.kSecImportItemTrust)
/// The identity's certificate chain, leaf first, as the trust built it.
nonisolated(unsafe) public let kSecImportItemCertChain: CFString = NSString(string: SecName.kSecImportItemCertChain)
/// The `SecIdentity`.
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = NSString(string: SecName.kSecImportItemIdentity)

/// Reads a PKCS#12 file (`SecPKCS12Import`), as Apple's data-protection keychain does: one
/// dictionary per private key, with the identity, an evaluated trust, its chain (leaf
/// first), its label and key ID. The identities live in memory unless the options hold
/// `kSecUseDataProtectionKeychain: true`, which adds each identity and every chain
/// certificate to the keychain (with the options' other attributes; duplicates are fine),
/// and `kSecImportExportKeychain` (macOS) adds them to that file keychain.
///
/// securityd opens the file (with OpenSSL, which reads OpenSSL 3's default files and the
/// legacy 3DES and RC2-40 ones); the key comes back to this process, as the file and its
/// password came from it.
///
/// - Returns: errSecAuthFailed for a wrong password, errSecDecode for what is not a
///   PKCS#12 file, errSecUnsupportedKeyFormat for a key that is neither RSA nor EC.
public func SecPKCS12Import(_ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    let options = (options as NSDictionary) as? [String: Any] ?? [:]
    let passphrase: String
    switch options[kSecImportExportPassphrase as String] {
    case nil: passphrase = ""
    case let string as String: passphrase = string
    default: return errSecParam
    }
    do throws(KeychainError) {
        let contents = try ProcessKeychain.keychain.decodePKCS12(
            Service.DecodePKCS12(file: pkcs12_data as Data, passphrase: SecretBytes(Array(passphrase.utf8))))
        let imported = try PKCS12Import(contents)
        if let keychain = options[kSecImportExportKeychain as String] as? SecKeychain {
            // macOS's file-keychain import: into that keychain.
            var into = options
            into[kSecImportExportKeychain as String] = nil
            into[kSecUseKeychain as String] = keychain
            let status = imported.add(with: into)
            guard status == errSecSuccess else { return status }
        } else if options[kSecUseDataProtectionKeychain as String] as? Bool == true {
            let status = imported.add(with: options)
            guard status == errSecSuccess else { return status }
        }
        items.pointee = imported.dictionaries as CFArray
        return errSecSuccess
    } catch {
        return error.status.rawValue
    }
}

/// The identities of a decoded PKCS#12 file, as `SecPKCS12Import` returns them.
struct PKCS12Import {
    var dictionaries: [NSDictionary] = []
    var identities: [SecIdentity] = []
    var chains: [[SecCertificate]] = []

    init(_ contents: Service.PKCS12Contents) throws(KeychainError) {
        guard let key = contents.privateKey, let certificateData = contents.certificate else { return }
        let parsed = key.withUnsafeBytes { bytes in Result { () throws(KeychainError) in try AsymmetricKey(pkcs8: Data(bytes)) } }
        let privateKey = try parsed.get()
        guard let certificate = SecCertificateCreateWithData(nil, certificateData as CFData),
            let identity = SecIdentityCreate(nil, certificate, SecKey(privateKey))
        else { throw KeychainError(status: .decode) }
        var trustRef: SecTrust?
        _ = SecTrustCreateWithCertificates([certificate] + contents.otherCertificates.map { $0 as NSData } as CFArray, SecPolicyCreateBasicX509(), &trustRef)
        guard let trust = trustRef else { throw KeychainError(status: .decode) }
        _ = SecTrustEvaluateWithError(trust, nil)  // "not guaranteed to successfully evaluate"
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? [certificate]
        var dictionary: [String: Any] = [
            kSecImportItemIdentity as String: identity,
            kSecImportItemTrust as String: trust,
            kSecImportItemCertChain as String: chain,
            kSecImportItemKeyID as String: privateKey.applicationLabel,
        ]
        if let summary = try? CertificateFields(der: Array(certificateData)).subjectSummary { dictionary[kSecImportItemLabel as String] = summary }
        dictionaries.append(NSDictionary(dictionary: dictionary))
        identities.append(identity)
        chains.append(chain)
    }

    /// Adds each identity and its chain to the keychain, as Apple's import to the
    /// data-protection keychain does: the options' attributes apply, duplicates are skipped.
    func add(with options: [String: Any]) -> OSStatus {
        var attributes = options
        for key in [kSecImportExportPassphrase, kSecImportToMemoryOnly, kSecUseDataProtectionKeychain] { attributes[key as String] = nil }
        var status = errSecSuccess
        for (identity, chain) in zip(identities, chains) {
            var add = attributes
            add[kSecClass as String] = kSecClassIdentity
            add[kSecValueRef as String] = identity
            let identityStatus = SecItemAdd(NSDictionary(dictionary: add), nil)
            if identityStatus != errSecSuccess, identityStatus != errSecDuplicateItem { status = identityStatus }
            for certificate in chain {
                add[kSecClass as String] = kSecClassCertificate
                add[kSecValueRef as String] = certificate
                let certificateStatus = SecItemAdd(NSDictionary(dictionary: add), nil)
                if certificateStatus != errSecSuccess, certificateStatus != errSecDuplicateItem { status = certificateStatus }
            }
        }
        return status
    }
}
