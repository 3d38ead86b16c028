import Foundation
import Security
import Testing

/// SecKey as Apple-platform code calls it: `[String: Any]` parameters bridged to
/// CFDictionary, `Unmanaged<CFError>` out-parameters, `SecKeyAlgorithm` values.
extension SecurityAPI {
    @Suite struct SecKeyTests {
        static func randomKey(_ type: CFString, _ bits: Int, _ extra: [String: Any] = [:]) throws -> SecKey {
            var error: Unmanaged<CFError>?
            let parameters = [kSecAttrKeyType as String: type, kSecAttrKeySizeInBits as String: bits].merging(extra) { $1 }
            let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error)
            if let error { throw error.takeRetainedValue() }
            return try #require(key)
        }

        static func sign(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ data: Data) -> (Data?, CFError?) {
            var error: Unmanaged<CFError>?
            let signature = SecKeyCreateSignature(key, algorithm, data as CFData, &error)
            return (signature as Data?, error?.takeRetainedValue())
        }

        static func verify(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ data: Data, _ signature: Data) -> (Bool, CFError?) {
            var error: Unmanaged<CFError>?
            let valid = SecKeyVerifySignature(key, algorithm, data as CFData, signature as CFData, &error)
            return (valid, error?.takeRetainedValue())
        }

        static let message = Data("The quick brown fox jumps over the lazy dog".utf8)

        @Test(arguments: [256, 384, 521])
        func ellipticCurveSignatures(bits: Int) throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, bits)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let algorithms: [SecKeyAlgorithm] = [
                .ecdsaSignatureMessageX962SHA1, .ecdsaSignatureMessageX962SHA256, .ecdsaSignatureMessageX962SHA384,
                .ecdsaSignatureMessageX962SHA512, .ecdsaSignatureMessageRFC4754SHA256, .ecdsaSignatureMessageRFC4754SHA512,
            ]
            for algorithm in algorithms {
                #expect(SecKeyIsAlgorithmSupported(privateKey, .sign, algorithm))
                #expect(SecKeyIsAlgorithmSupported(publicKey, .verify, algorithm))
                #expect(!SecKeyIsAlgorithmSupported(publicKey, .sign, algorithm))
                let signature = try #require(Self.sign(privateKey, algorithm, Self.message).0)
                #expect(Self.verify(publicKey, algorithm, Self.message, signature).0, "\(algorithm.rawValue)")
                var other = Self.message
                other[0] ^= 1
                let (valid, error) = Self.verify(publicKey, algorithm, other, signature)
                #expect(!valid)
                #expect(error.map(CFErrorGetCode) == CFIndex(errSecVerifyFailed))
            }
            // RFC 4754 is r‖s, each the field's length.
            let raw = try #require(Self.sign(privateKey, .ecdsaSignatureMessageRFC4754SHA256, Self.message).0)
            #expect(raw.count == 2 * ((bits + 7) / 8))
            #expect(SecKeyGetBlockSize(privateKey) == (bits + 7) / 8)
        }

        @Test func digestSignaturesTakeTheCallersDigestOfTheRightLength() throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let digest = Data(repeating: 7, count: 32)
            let signature = try #require(Self.sign(privateKey, .ecdsaSignatureDigestX962SHA256, digest).0)
            #expect(Self.verify(publicKey, .ecdsaSignatureDigestX962SHA256, digest, signature).0)
            #expect(Self.verify(publicKey, .ecdsaSignatureDigestX962, digest, signature).0, "the digest of any length")
            let (none, error) = Self.sign(privateKey, .ecdsaSignatureDigestX962SHA256, Data(count: 20))
            #expect(none == nil)
            #expect(error.map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(error.map { CFErrorCopyDescription($0) as String }?.contains("bad digest size") == true)
        }

        @Test func rsaSignaturesPKCS1AndPSS() throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeRSA, 2048)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            #expect(SecKeyGetBlockSize(privateKey) == 256)
            for algorithm: SecKeyAlgorithm in [
                .rsaSignatureMessagePKCS1v15SHA1, .rsaSignatureMessagePKCS1v15SHA256, .rsaSignatureMessagePKCS1v15SHA512,
                .rsaSignatureMessagePSSSHA256, .rsaSignatureMessagePSSSHA384,
            ] {
                let signature = try #require(Self.sign(privateKey, algorithm, Self.message).0, "\(algorithm.rawValue)")
                #expect(signature.count == 256)
                #expect(Self.verify(publicKey, algorithm, Self.message, signature).0)
                #expect(!Self.verify(publicKey, algorithm, Self.message + Data([0]), signature).0)
            }
            // PKCS#1 v1.5 is deterministic; PSS is salted.
            #expect(Self.sign(privateKey, .rsaSignatureMessagePKCS1v15SHA256, Self.message).0 == Self.sign(privateKey, .rsaSignatureMessagePKCS1v15SHA256, Self.message).0)
            #expect(Self.sign(privateKey, .rsaSignatureMessagePSSSHA256, Self.message).0 != Self.sign(privateKey, .rsaSignatureMessagePSSSHA256, Self.message).0)
        }

        @Test func anAlgorithmTheKeyCannotDoIsErrSecParamWithApplesWords() throws {
            let ecKey = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let (none, error) = Self.sign(ecKey, .rsaSignatureMessagePKCS1v15SHA256, Self.message)
            #expect(none == nil)
            let failure = try #require(error)
            #expect(CFErrorGetCode(failure) == CFIndex(errSecParam))
            #expect(CFErrorGetDomain(failure) as String == NSOSStatusErrorDomain)
            #expect((CFErrorCopyDescription(failure) as String).contains("algid:sign:RSA:message-PKCS1v15:SHA256: algorithm not supported by the key"))
            let publicKey = try #require(SecKeyCopyPublicKey(ecKey))
            #expect(Self.sign(publicKey, .ecdsaSignatureMessageX962SHA256, Self.message).1.map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(!SecKeyIsAlgorithmSupported(ecKey, .sign, SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:nonsense" as CFString)))
        }

        @Test func externalRepresentationsAreApples() throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            var error: Unmanaged<CFError>?
            let privateBytes = try #require(SecKeyCopyExternalRepresentation(privateKey, &error) as Data?)
            let ownPublicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let publicBytes = try #require(SecKeyCopyExternalRepresentation(ownPublicKey, &error) as Data?)
            #expect(privateBytes.count == 97 && privateBytes.first == 4, "04‖X‖Y‖K")
            #expect(publicBytes == privateBytes.prefix(65))
            let again = SecKeyCreateWithData(
                privateBytes as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, &error)
            #expect(again == privateKey)
            let publicKey = SecKeyCreateWithData(
                publicBytes as CFData, [kSecAttrKeyType as String: kSecAttrKeyTypeEC, kSecAttrKeyClass as String: kSecAttrKeyClassPublic] as CFDictionary, &error)
            #expect(publicKey == SecKeyCopyPublicKey(privateKey))
            #expect(publicKey != privateKey, "a public key is not its private key")

            // Garbage, and a key of one type presented as the other, are refused.
            var failure: Unmanaged<CFError>?
            #expect(SecKeyCreateWithData(Data([4, 1, 2]) as CFData, [kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary, &failure) == nil)
            #expect((failure?.takeRetainedValue()).map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(SecKeyCreateWithData(publicBytes as CFData, [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary, nil) == nil)
            #expect(SecKeyCreateWithData(publicBytes as CFData, [kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary, nil) == nil, "no key type")
        }

        @Test func rsaPublicKeysArePKCS1AndSPKIIsAccepted() throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeRSA, 2048)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let pkcs1 = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
            #expect(pkcs1.first == 0x30)
            let attributes = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic, kSecAttrKeySizeInBits: 2048] as CFDictionary
            #expect(SecKeyCreateWithData(pkcs1 as CFData, attributes, nil) == publicKey)
            // SPKI: the PKCS#1 key inside AlgorithmIdentifier(rsaEncryption) and a BIT STRING.
            let algorithm: [UInt8] = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00]
            let bitString = [0x03] + Self.derLength(pkcs1.count + 1) + [0x00] + Array(pkcs1)
            let spki = [0x30] + Self.derLength(algorithm.count + bitString.count) + algorithm + bitString
            #expect(SecKeyCreateWithData(Data(spki) as CFData, attributes, nil) == publicKey)
            let privateBytes = try #require(SecKeyCopyExternalRepresentation(privateKey, nil) as Data?)
            let privateAttributes = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary
            #expect(SecKeyCreateWithData(privateBytes as CFData, privateAttributes, nil) == privateKey)
        }

        static func derLength(_ count: Int) -> [UInt8] {
            count < 128 ? [UInt8(count)] : count < 256 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xff)]
        }

        @Test func attributesAreApples() throws {
            let privateKey = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 384)
            let attributes = try #require(SecKeyCopyAttributes(privateKey) as? [String: Any])
            #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
            #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeECSECPrimeRandom as String)
            #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == 384)
            #expect(attributes[kSecAttrCanSign as String] as? Bool == true)
            #expect(attributes[kSecAttrCanVerify as String] as? Bool == false)
            let ownPublicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let publicBytes = try #require(SecKeyCopyExternalRepresentation(ownPublicKey, nil) as Data?)
            #expect(attributes[kSecAttrApplicationLabel as String] as? Data == Data(Self.sha1(publicBytes)), "klbl = SHA-1 of the public key")
            let publicAttributes = try #require(SecKeyCopyAttributes(ownPublicKey) as? [String: Any])
            #expect(publicAttributes[kSecAttrCanDerive as String] as? Bool == false, "EC public keys cannot derive")
            #expect(CFGetTypeID(privateKey) == SecKeyGetTypeID())
            #expect(CFGetTypeID(Data() as CFData) != SecKeyGetTypeID())
        }

        /// SHA-1 by `openssl dgst`, not by the code under test.
        static func sha1(_ data: Data) -> [UInt8] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            try? data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let output = (try? OpenSSL.run(["dgst", "-sha1", "-r", file.path]).output) ?? ""
            let hex = output.prefix(40)
            return stride(from: 0, to: hex.count, by: 2).compactMap {
                UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)
            }
        }

        @Test func randomKeyParametersAreChecked() throws {
            #expect(throws: (any Error).self) { try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 257) }
            #expect(throws: (any Error).self) { try Self.randomKey("nonsense" as CFString, 256) }
            #expect(throws: (any Error).self) { try Self.randomKey(kSecAttrKeyTypeRSA, 1001) }
            // Given as strings, as some code does.
            _ = try Self.randomKey("73" as CFString, 256, [kSecAttrKeySizeInBits as String: "256"])
        }

        @Test func keysCompareByKey() throws {
            let one = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let two = try Self.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            #expect(one != two)
            #expect(SecKeyCopyPublicKey(one) == SecKeyCopyPublicKey(one))
            let description = String(describing: one)
            #expect(description.hasPrefix("<SecKeyRef algorithm id: 3, key type: ECPrivateKey, version: 4, block size: 256 bits"))
            let secret = try #require(SecKeyCopyExternalRepresentation(one, nil) as Data?).suffix(32)
            #expect(!description.lowercased().contains(secret.map { String(format: "%02x", $0) }.joined()), "no key material")
        }
    }
}
