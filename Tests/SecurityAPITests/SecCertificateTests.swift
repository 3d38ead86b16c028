import Foundation
import Security
import Testing

/// SecCertificate on a certificate made by Python's `cryptography` (not by us), read as
/// Apple's functions read it, and stored as a keychain item with Apple's derived attributes.
extension SecurityAPI {
    @Suite struct SecCertificateTests {
        let service = SecurityAPI.useSharedKeychain()
        let certificateData: Data
        let keyData: Data

        init() throws {
            let directory = try OpenSSL.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let made = try OpenSSL.execute("/usr/bin/python3", [SecKeyInteropTests.reference, "make-certificate", directory.path])
            try #require(made.status == 0, "\(made.output)")
            certificateData = try Data(contentsOf: directory.appendingPathComponent("cert.der"))
            keyData = try Data(contentsOf: directory.appendingPathComponent("key.der"))
        }

        func certificate() throws -> SecCertificate {
            try #require(SecCertificateCreateWithData(nil, certificateData as CFData))
        }

        @Test func readsTheFieldsAsApplesFunctionsDo() throws {
            let certificate = try certificate()
            #expect(SecCertificateCopyData(certificate) as Data == certificateData)
            #expect(SecCertificateCopySubjectSummary(certificate) as String? == "Test Leaf")
            var commonName: CFString?
            #expect(SecCertificateCopyCommonName(certificate, &commonName) == errSecSuccess)
            #expect(commonName as String? == "Test Leaf")
            var emails: CFArray?
            #expect(SecCertificateCopyEmailAddresses(certificate, &emails) == errSecSuccess)
            #expect(emails as? [String] == ["alt@example.com", "leaf@example.com"], "the SubjectAltName's first, then the subject's")
            #expect(SecCertificateCopySerialNumberData(certificate, nil) as Data? == Data([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]))
            let start = try #require(SecCertificateCopyNotValidBeforeDate(certificate) as Date?)
            let end = try #require(SecCertificateCopyNotValidAfterDate(certificate) as Date?)
            #expect(start == ISO8601DateFormatter().date(from: "2026-01-02T03:04:05Z"))
            #expect(end.timeIntervalSince(start) == 30 * 86_400)

            // The key is the one the certificate was made for.
            let privateKey = try #require(
                SecKeyCreateWithData(keyData as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, nil))
            #expect(SecCertificateCopyKey(certificate) == SecKeyCopyPublicKey(privateKey))
        }

        @Test func normalizesNamesAsApple() throws {
            let subject = try #require(SecCertificateCopyNormalizedSubjectSequence(try certificate()) as Data?)
            let text = String(decoding: subject, as: UTF8.self)
            #expect(subject.first == 0x30, "a SEQUENCE")
            #expect(text.contains("MIXED CASE ORG") && !text.contains("Mixed"), "PrintableString upper-cased, blanks collapsed and trimmed")
            #expect(text.contains("Test Leaf"), "UTF8String kept as it is")
            #expect(SecCertificateCopyNormalizedIssuerSequence(try certificate()) as Data? == subject, "self-signed")
        }

        @Test func aSubjectWithoutACommonNameHasNoCommonName() throws {
            let directory = try OpenSSL.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let made = try OpenSSL.run(
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/O=No Common Name Inc",
                 "-keyout", "key.pem", "-outform", "DER", "-out", "cert.der", "-days", "1"], in: directory)
            try #require(made.status == 0, "\(made.output)")
            let data = try Data(contentsOf: directory.appendingPathComponent("cert.der"))
            let certificate = try #require(SecCertificateCreateWithData(nil, data as CFData))
            var commonName: CFString?
            #expect(SecCertificateCopyCommonName(certificate, &commonName) == -26276, "errSecInternal, as Apple's")
            #expect(commonName == nil)
            #expect(SecCertificateCopySubjectSummary(certificate) as String? == "No Common Name Inc", "the organization, without a common name")
        }

        @Test func refusesWhatIsNotACertificate() {
            #expect(SecCertificateCreateWithData(nil, Data([0x30, 0x03, 0x02, 0x01, 0x01]) as CFData) == nil)
            #expect(SecCertificateCreateWithData(nil, Data("-----BEGIN CERTIFICATE-----".utf8) as CFData) == nil, "PEM is not DER")
            #expect(SecCertificateCreateWithData(nil, certificateData.dropLast() as CFData) == nil, "truncated")
        }

        @Test func aCertificateItemGetsApplesDerivedAttributesAndJoinsItsKey() throws {
            let certificate = try certificate()
            let label = "cert-" + service
            let add: [String: Any] = [kSecClass as String: kSecClassCertificate, kSecValueRef as String: certificate, kSecAttrLabel as String: label]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem, "issuer and serial number are its primary key")

            var found: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: label, kSecReturnAttributes as String: true,
                kSecReturnRef as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let attributes = try #require(found as? [String: Any])
            #expect((attributes[kSecValueRef as String] as? Data) == certificateData, "kSecReturnRef gives the certificate")
            #expect(attributes[kSecAttrSerialNumber as String] as? Data == SecCertificateCopySerialNumberData(certificate, nil) as Data?)
            #expect(attributes[kSecAttrCertificateType as String] as? Int == 3)
            #expect(attributes[kSecAttrCertificateEncoding as String] as? Int == 3)
            let subject = try #require(SecCertificateCopyNormalizedSubjectSequence(certificate) as Data?)
            #expect((attributes[kSecAttrSubject as String] as? Data).map { subject.suffix($0.count) == $0 && $0.count > 10 } == true, "the normalized content")

            // pkhh = SHA-1 of the public key = the key item's klbl: the identity join.
            let privateKey = try #require(
                SecKeyCreateWithData(keyData as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, nil))
            let keyLabel = try #require(SecKeyCopyAttributes(privateKey) as? [String: Any])[kSecAttrApplicationLabel as String] as? Data
            #expect(attributes[kSecAttrPublicKeyHash as String] as? Data == keyLabel)
            let tag = Data(service.utf8)
            #expect(SecItemAdd([kSecClass: kSecClassKey, kSecValueRef: privateKey, kSecAttrApplicationTag: tag] as CFDictionary, nil) == errSecSuccess)
            var identity: CFTypeRef?
            let identityQuery: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: label, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(identityQuery as CFDictionary, &identity) == errSecSuccess, "the certificate and its key make an identity")

            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete([kSecClass: kSecClassCertificate, kSecAttrLabel: label] as CFDictionary) == errSecSuccess)
        }

        @Test func theLabelDefaultsToTheSubjectSummary() throws {
            let add: [String: Any] = [kSecClass as String: kSecClassCertificate, kSecValueRef as String: try certificate()]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var found: CFTypeRef?
            let query: [String: Any] = [kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "Test Leaf", kSecReturnRef as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            #expect(found as? Data == certificateData)
            #expect(SecItemDelete([kSecClass: kSecClassCertificate, kSecAttrLabel: "Test Leaf"] as CFDictionary) == errSecSuccess)
        }
    }
}
