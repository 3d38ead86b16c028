import Foundation
import Security
import Testing

/// SecPKCS12Import as grpc-swift's and BlueSSLService's code calls it, on files made by
/// `openssl pkcs12`: OpenSSL 3's default (PBES2, AES-256, a SHA-256 MAC) and `-legacy`
/// (RC2-40 and 3DES, a SHA-1 MAC), with and without a chain, and the failures Apple names.
extension SecurityAPI {
    @Suite struct SecPKCS12Tests {
        let service = SecurityAPI.useSharedKeychain()
        let directory: URL

        init() throws {
            directory = try OpenSSL.temporaryDirectory()
            let made = try OpenSSL.execute("/usr/bin/python3", [SecKeyInteropTests.reference, "make-chain", directory.path])
            try #require(made.status == 0, "\(made.output)")
            for name in ["leaf", "intermediate", "root"] {
                try openssl(["x509", "-inform", "DER", "-in", name + ".der", "-out", name + ".pem"])
            }
        }

        @discardableResult
        func openssl(_ arguments: [String]) throws -> String {
            let result = try OpenSSL.run(arguments, in: directory)
            try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.output)")
            return result.output
        }

        func data(_ file: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(file)) }

        func certificateNamed(_ name: String) throws -> SecCertificate {
            try #require(SecCertificateCreateWithData(nil, try data(name + ".der") as CFData))
        }

        /// `SecPKCS12Import` of `file` with `options`; its status and items.
        func importing(_ file: String, _ options: [String: Any]) throws -> (OSStatus, [[String: Any]]) {
            var items: CFArray?
            let status = SecPKCS12Import(try data(file) as CFData, options as CFDictionary, &items)
            return (status, (items as? [[String: Any]]) ?? [])
        }

        /// The leaf's identity with the intermediate, as `openssl pkcs12 -export` writes it.
        func export(_ file: String, password: String, _ extra: [String] = []) throws {
            try openssl(
                ["pkcs12", "-export", "-inkey", "leaf.key.pem", "-in", "leaf.pem", "-certfile", "intermediate.pem", "-out", file, "-passout", "pass:" + password]
                    + extra)
        }

        @Test func openSSLsDefaultFileGivesTheIdentityItsTrustAndChain() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            try export("default.p12", password: "p12 secret")
            #expect(try openssl(["pkcs12", "-in", "default.p12", "-info", "-noout", "-passin", "pass:p12 secret"]).contains("AES-256-CBC"))
            let (status, items) = try importing("default.p12", [kSecImportExportPassphrase as String: "p12 secret"])
            #expect(status == errSecSuccess)
            try #require(items.count == 1)
            let item = items[0]
            let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
            var certificate: SecCertificate?
            #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
            #expect(certificate.map { SecCertificateCopyData($0) as Data } == (try data("leaf.der")))
            let chain = try #require(item[kSecImportItemCertChain as String] as? [SecCertificate])
            #expect(chain.map { SecCertificateCopyData($0) as Data } == [try data("leaf.der"), try data("intermediate.der")], "leaf first, as far as it builds")
            let trust = try #require(item[kSecImportItemTrust as String].map { $0 as AnyObject } as? SecTrust)
            #expect(!SecTrustEvaluateWithError(trust, nil), "its root is nobody's anchor")
            #expect(item[kSecImportItemLabel as String] as? String == "leaf.example.com")

            // The key is the certificate's: what it signs, the certificate's key verifies.
            var key: SecKey?
            _ = SecIdentityCopyPrivateKey(identity, &key)
            let privateKey = try #require(key)
            let publicKey = try #require(SecCertificateCopyKey(try certificateNamed("leaf")))
            let signature = try #require(SecKeyTests.sign(privateKey, .ecdsaSignatureMessageX962SHA256, Data("p12".utf8)).0)
            #expect(SecKeyTests.verify(publicKey, .ecdsaSignatureMessageX962SHA256, Data("p12".utf8), signature).0)
            let attributes = try #require(SecKeyCopyAttributes(privateKey) as? [String: Any])
            #expect(item[kSecImportItemKeyID as String] as? Data == attributes[kSecAttrApplicationLabel as String] as? Data)

            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassIdentity, kSecReturnRef: true, kSecMatchLimit: kSecMatchLimitAll] as CFDictionary, &found)
                    != errSecSuccess || !((found as? [SecIdentity]) ?? []).contains(identity),
                "imported to memory only")
        }

        @Test func legacyFilesImportToo() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rsa.key", "-out", "rsa.pem", "-subj", "/CN=Legacy RSA", "-days", "30"])
            try openssl(["pkcs12", "-export", "-legacy", "-inkey", "rsa.key", "-in", "rsa.pem", "-out", "legacy.p12", "-passout", "pass:old"])
            let info = try openssl(["pkcs12", "-legacy", "-in", "legacy.p12", "-info", "-noout", "-passin", "pass:old"])
            #expect(info.contains("pbeWithSHA1And40BitRC2-CBC") && info.contains("pbeWithSHA1And3-KeyTripleDES-CBC"), "\(info)")
            let (status, items) = try importing("legacy.p12", [kSecImportExportPassphrase as String: "old"])
            #expect(status == errSecSuccess)
            let identity = try #require(items.first?[kSecImportItemIdentity as String] as? SecIdentity)
            var key: SecKey?
            _ = SecIdentityCopyPrivateKey(identity, &key)
            let attributes = try #require(key.flatMap { SecKeyCopyAttributes($0) } as? [String: Any])
            #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeRSA as String)
            #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == 2048)
            #expect(items.first?[kSecImportItemLabel as String] as? String == "Legacy RSA")

            // And 3DES throughout, as older macOS exports are.
            try openssl(["pkcs12", "-export", "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1", "-inkey", "rsa.key", "-in", "rsa.pem", "-out", "3des.p12", "-passout", "pass:old"])
            #expect(try importing("3des.p12", [kSecImportExportPassphrase as String: "old"]).1.count == 1)
        }

        @Test func badPasswordsAndBadFilesHaveApplesStatuses() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            try export("file.p12", password: "right")
            #expect(try importing("file.p12", [kSecImportExportPassphrase as String: "wrong"]).0 == errSecAuthFailed)
            #expect(try importing("file.p12", [:]).0 == errSecAuthFailed, "no passphrase is the empty one")
            #expect(try importing("file.p12", [kSecImportExportPassphrase as String: 42]).0 == errSecParam)

            let whole = try data("file.p12")
            for broken in [Data("not a pkcs12 file".utf8), whole.prefix(whole.count / 2), whole.dropLast(), Data(), try data("leaf.der")] {
                var items: CFArray?
                #expect(SecPKCS12Import(broken as CFData, [kSecImportExportPassphrase: "right"] as CFDictionary, &items) == errSecDecode)
                #expect(items == nil)
            }
            var flipped = whole
            flipped[flipped.count - 40] ^= 0x01  // inside the MAC's data: the MAC fails
            var items: CFArray?
            let status = SecPKCS12Import(flipped as CFData, [kSecImportExportPassphrase: "right"] as CFDictionary, &items)
            #expect(status == errSecAuthFailed || status == errSecDecode)

            // Without a password, and with certificates only: both open, the latter with no identity.
            try export("open.p12", password: "")
            #expect(try importing("open.p12", [:]).1.count == 1)
            try openssl(["pkcs12", "-export", "-nokeys", "-in", "leaf.pem", "-out", "certs.p12", "-passout", "pass:c"])
            let certificatesOnly = try importing("certs.p12", [kSecImportExportPassphrase as String: "c"])
            #expect(certificatesOnly.0 == errSecSuccess && certificatesOnly.1.isEmpty)
        }

        @Test func theDataProtectionKeychainOptionAddsTheIdentityAndItsChain() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            try export("add.p12", password: "add")
            let label = "p12-" + service
            let options: [String: Any] = [
                kSecImportExportPassphrase as String: "add", kSecUseDataProtectionKeychain as String: true, kSecAttrLabel as String: label,
            ]
            let (status, items) = try importing("add.p12", options)
            #expect(status == errSecSuccess)
            let identity = try #require(items.first?[kSecImportItemIdentity as String] as? SecIdentity)
            var found: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass: kSecClassIdentity, kSecAttrLabel: label, kSecReturnRef: true] as CFDictionary, &found) == errSecSuccess)
            #expect(found as? SecIdentity == identity)
            #expect(
                SecItemCopyMatching(
                    [kSecClass: kSecClassCertificate, kSecValueRef: try certificateNamed("intermediate"), kSecReturnAttributes: true] as CFDictionary, &found)
                    == errSecSuccess, "the chain's certificates are added")
            #expect(try importing("add.p12", options).0 == errSecSuccess, "importing again skips what is there")
            #expect(SecItemDelete([kSecClass: kSecClassIdentity, kSecAttrLabel: label] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete([kSecClass: kSecClassCertificate, kSecAttrLabel: label] as CFDictionary) == errSecSuccess)
        }
    }
}
