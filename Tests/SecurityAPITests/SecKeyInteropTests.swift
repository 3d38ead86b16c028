import Foundation
import Security
import Testing

/// Our keys against implementations that are not ours: `openssl` verifies our signatures
/// and we verify its; Python's `cryptography`, following Apple's constructions
/// (Fixtures/apple_seckey_reference.py), decrypts our ECIES and RSA-OAEP messages and
/// encrypts ones we decrypt.
extension SecurityAPI {
    @Suite struct SecKeyInteropTests {
        let directory: URL
        static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/apple_seckey_reference.py").path

        init() throws {
            directory = try OpenSSL.temporaryDirectory()
        }

        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

        func reference(_ arguments: [String]) throws -> Data {
            let result = try OpenSSL.execute("/usr/bin/python3", [Self.reference] + arguments)
            try #require(result.status == 0, "\(arguments.first ?? ""): \(result.output)")
            return try #require(Data(hex: result.output))
        }

        func openssl(_ arguments: [String]) throws -> String {
            let result = try OpenSSL.run(arguments, in: directory)
            try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.output)")
            return result.output
        }

        static func bytes(_ key: SecKey) throws -> Data {
            try #require(SecKeyCopyExternalRepresentation(key, nil) as Data?)
        }

        @Test func opensslVerifiesOurECDSAAndWeVerifyItsSignatures() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            let message = Data("signed by Trousseau".utf8)
            try message.write(to: URL(fileURLWithPath: file("message")))

            let ours = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let signature = try #require(SecKeyTests.sign(ours, .ecdsaSignatureMessageX962SHA256, message).0)
            try signature.write(to: URL(fileURLWithPath: file("signature")))
            let pem = try OpenSSL.execute("/usr/bin/python3", [Self.reference, "ec-public-pem", try Self.bytes(try #require(SecKeyCopyPublicKey(ours))).hex])
            try pem.output.write(toFile: file("ours.pem"), atomically: true, encoding: .utf8)
            #expect(try openssl(["dgst", "-sha256", "-verify", "ours.pem", "-signature", "signature", "message"]).contains("Verified OK"))

            _ = try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "theirs.pem"])
            _ = try openssl(["pkey", "-in", "theirs.pem", "-pubout", "-out", "theirs.pub.pem"])
            _ = try openssl(["dgst", "-sha384", "-sign", "theirs.pem", "-out", "theirs.sig", "message"])
            let point = try reference(["ec-point", file("theirs.pub.pem")])
            var error: Unmanaged<CFError>?
            let theirs = try #require(
                SecKeyCreateWithData(point as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary, &error))
            let theirSignature = try Data(contentsOf: URL(fileURLWithPath: file("theirs.sig")))
            #expect(SecKeyTests.verify(theirs, .ecdsaSignatureMessageX962SHA384, message, theirSignature).0)
            #expect(!SecKeyTests.verify(theirs, .ecdsaSignatureMessageX962SHA384, message + Data([1]), theirSignature).0)
        }

        @Test func opensslAndWeAgreeOnRSAPKCS1AndPSS() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            let message = Data("signed with RSA".utf8)
            try message.write(to: URL(fileURLWithPath: file("message")))
            _ = try openssl(["genrsa", "-out", "rsa.pem", "2048"])
            _ = try openssl(["rsa", "-in", "rsa.pem", "-outform", "DER", "-traditional", "-out", "rsa.der"])
            _ = try openssl(["rsa", "-in", "rsa.pem", "-pubout", "-out", "rsa.pub.pem"])
            let pkcs1 = try Data(contentsOf: URL(fileURLWithPath: file("rsa.der")))
            var error: Unmanaged<CFError>?
            let privateKey = try #require(
                SecKeyCreateWithData(pkcs1 as CFData, [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, &error))
            #expect(try Self.bytes(privateKey) == pkcs1, "PKCS#1 RSAPrivateKey both ways")

            // Ours, verified by openssl: PSS with salt = digest length, and PKCS#1 v1.5.
            let pss = try #require(SecKeyTests.sign(privateKey, .rsaSignatureMessagePSSSHA256, message).0)
            try pss.write(to: URL(fileURLWithPath: file("pss.sig")))
            #expect(try openssl([
                "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest", "-verify", "rsa.pub.pem",
                "-signature", "pss.sig", "message",
            ]).contains("Verified OK"))
            let pkcs = try #require(SecKeyTests.sign(privateKey, .rsaSignatureMessagePKCS1v15SHA512, message).0)
            try pkcs.write(to: URL(fileURLWithPath: file("pkcs.sig")))
            #expect(try openssl(["dgst", "-sha512", "-verify", "rsa.pub.pem", "-signature", "pkcs.sig", "message"]).contains("Verified OK"))

            // openssl's, verified by us.
            _ = try openssl(["dgst", "-sha384", "-sign", "rsa.pem", "-out", "theirs.sig", "message"])
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let theirs = try Data(contentsOf: URL(fileURLWithPath: file("theirs.sig")))
            #expect(SecKeyTests.verify(publicKey, .rsaSignatureMessagePKCS1v15SHA384, message, theirs).0)
        }

        @Test func eciesMatchesAReferenceOfApplesConstruction() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            let secret = Data("for the recipient only".utf8)
            for bits in [256, 384] {
                let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, bits)
                let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
                for algorithm: SecKeyAlgorithm in [.eciesEncryptionStandardVariableIVX963SHA256AESGCM, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM] {
                    let ours = try #require(SecKeyEncryptionTests.encrypt(publicKey, algorithm, secret).0)
                    #expect(try reference(["ecies-decrypt", try Self.bytes(privateKey).hex, ours.hex]) == secret, "P-\(bits): ours decrypted by the reference")
                    let theirs = try reference(["ecies-encrypt", try Self.bytes(publicKey).hex, secret.hex])
                    #expect(SecKeyEncryptionTests.decrypt(privateKey, algorithm, theirs).0 == secret, "P-\(bits): the reference's decrypted by us")
                }
            }
        }

        @Test func rsaOAEPMatchesAReference() throws {
            defer { try? FileManager.default.removeItem(at: directory) }
            let secret = Data("wrapped".utf8)
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeRSA, 2048)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let ours = try #require(SecKeyEncryptionTests.encrypt(publicKey, .rsaEncryptionOAEPSHA256, secret).0)
            #expect(try reference(["oaep-decrypt", try Self.bytes(privateKey).hex, ours.hex]) == secret)
            let theirs = try reference(["oaep-encrypt", try Self.bytes(publicKey).hex, secret.hex])
            #expect(SecKeyEncryptionTests.decrypt(privateKey, .rsaEncryptionOAEPSHA256, theirs).0 == secret)
            let wrapped = try reference(["oaep-aesgcm-encrypt", try Self.bytes(publicKey).hex, secret.hex])
            #expect(SecKeyEncryptionTests.decrypt(privateKey, .rsaEncryptionOAEPSHA256AESGCM, wrapped).0 == secret)
        }
    }
}

extension Data {
    init?(hex: String) {
        let digits = Array(hex.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes)
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
