import Foundation
import Security
import Testing

/// SecIdentity: a certificate and its private key, made, stored, found and deleted the way
/// SwiftPM's package signing and TLS code do it.
extension SecurityAPI {
    @Suite struct SecIdentityTests {
        let service = SecurityAPI.useSharedKeychain()
        let fixture: SecCertificateTests

        init() throws {
            fixture = try SecCertificateTests()
        }

        func privateKey() throws -> SecKey {
            try #require(
                SecKeyCreateWithData(
                    fixture.keyData as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, nil))
        }

        @Test func anIdentityIsACertificateAndItsOwnKey() throws {
            let certificate = try fixture.certificate()
            let identity = try #require(SecIdentityCreate(nil, certificate, try privateKey()))
            #expect(CFGetTypeID(identity) == SecIdentityGetTypeID())
            var copied: SecCertificate?
            #expect(SecIdentityCopyCertificate(identity, &copied) == errSecSuccess)
            #expect(copied.map { SecCertificateCopyData($0) as Data } == fixture.certificateData)
            var key: SecKey?
            #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
            #expect(key == (try privateKey()))
            let stranger = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            #expect(SecIdentityCreate(nil, certificate, stranger) == nil, "another key is not the certificate's")
        }

        @Test func anIdentityIsStoredAsItsCertificateAndKeyAndComesBackByRef() throws {
            let label = "identity-" + service
            let identity = try #require(SecIdentityCreate(nil, try fixture.certificate(), try privateKey()))
            let add: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecValueRef as String: identity, kSecAttrLabel as String: label]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem, "both halves were there")

            var found: CFTypeRef?
            let query: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: label, kSecReturnRef as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let back = try #require(found as? SecIdentity)
            #expect(back == identity)
            var key: SecKey?
            _ = SecIdentityCopyPrivateKey(back, &key)
            let ownKey = try #require(key)
            let signature = try #require(SecKeyTests.sign(ownKey, .ecdsaSignatureMessageX962SHA256, Data("signed".utf8)).0)
            let certificateKey = try #require(SecCertificateCopyKey(try fixture.certificate()))
            #expect(SecKeyTests.verify(certificateKey, .ecdsaSignatureMessageX962SHA256, Data("signed".utf8), signature).0)

            // SwiftPM's lookup: the certificate by label, then the identity of it (macOS).
            var made: SecIdentity?
            #expect(SecIdentityCreateWithCertificate(nil, try fixture.certificate(), &made) == errSecSuccess)
            #expect(made == identity)

            #expect(SecItemDelete([kSecClass: kSecClassIdentity, kSecAttrLabel: label] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecItemNotFound)
            #expect(SecIdentityCreateWithCertificate(nil, try fixture.certificate(), &made) == errSecItemNotFound, "the key went with it")
        }
    }
}
