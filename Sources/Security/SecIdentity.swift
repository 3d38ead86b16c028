import Foundation
import KeychainCertificates
import KeychainModel

/// A certificate and its private key (`SecIdentityRef`).
public final class SecIdentity: NSObject, @unchecked Sendable {
    // @unchecked: immutable after creation.
    let certificate: SecCertificate
    let privateKey: SecKey

    init(certificate: SecCertificate, privateKey: SecKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecIdentity else { return false }
        return certificate.isEqual(other.certificate) && privateKey == other.privateKey
    }

    public override var hash: Int { certificate.hash }

    /// Whether `key` is the private key of `certificate`: its public key's SHA-1 is the
    /// certificate's public-key hash.
    static func matches(_ certificate: SecCertificate, _ key: SecKey) -> Bool {
        guard key.isPrivate, let fields = try? CertificateFields(der: Array(certificate as Data)) else { return false }
        return fields.publicKeyHash == key.applicationLabel
    }
}

/// An identity from a certificate and its private key (`SecIdentityCreate`); nil when the
/// key is not the certificate's.
public func SecIdentityCreate(_ allocator: CFAllocator?, _ certificate: SecCertificate, _ privateKey: SecKey) -> SecIdentity? {
    SecIdentity.matches(certificate, privateKey) ? SecIdentity(certificate: certificate, privateKey: privateKey) : nil
}

/// The identity of `certificate` with its private key found in the keychain
/// (`SecIdentityCreateWithCertificate`, macOS); errSecItemNotFound when there is none.
/// `keychainOrArray` is ignored: there is one keychain.
public func SecIdentityCreateWithCertificate(
    _ keychainOrArray: CFTypeRef?, _ certificateRef: SecCertificate, _ identityRef: UnsafeMutablePointer<SecIdentity?>
) -> OSStatus {
    guard let fields = try? CertificateFields(der: Array(certificateRef as Data)) else { return errSecParam }
    let query: [String: Any] = [
        kSecClass as String: kSecClassKey, kSecAttrApplicationLabel as String: fields.publicKeyHash,
        kSecAttrKeyClass as String: kSecAttrKeyClassPrivate, kSecReturnRef as String: true,
    ]
    var key: CFTypeRef?
    let status = SecItemCopyMatching(NSDictionary(dictionary: query), &key)
    guard status == errSecSuccess else { return status }
    guard let privateKey = key as? SecKey, let identity = SecIdentityCreate(nil, certificateRef, privateKey) else { return errSecItemNotFound }
    identityRef.pointee = identity
    return errSecSuccess
}

/// The identity's certificate (`SecIdentityCopyCertificate`).
public func SecIdentityCopyCertificate(_ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>) -> OSStatus {
    certificateRef.pointee = identityRef.certificate
    return errSecSuccess
}

/// The identity's private key (`SecIdentityCopyPrivateKey`).
public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity, _ privateKeyRef: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    privateKeyRef.pointee = identityRef.privateKey
    return errSecSuccess
}

/// `SecIdentityGetTypeID`.
public func SecIdentityGetTypeID() -> CFTypeID { CoreFoundationType.secIdentity.rawValue }
