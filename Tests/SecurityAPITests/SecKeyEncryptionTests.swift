import Foundation
import Security
import Testing

/// SecKeyCreateEncryptedData / DecryptedData and SecKeyCopyKeyExchangeResult, round trips
/// and Apple's failures.
extension SecurityAPI {
    @Suite struct SecKeyEncryptionTests {
        static func encrypt(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ data: Data) -> (Data?, CFError?) {
            var error: Unmanaged<CFError>?
            let result = SecKeyCreateEncryptedData(key, algorithm, data as CFData, &error)
            return (result as Data?, error?.takeRetainedValue())
        }

        static func decrypt(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ data: Data) -> (Data?, CFError?) {
            var error: Unmanaged<CFError>?
            let result = SecKeyCreateDecryptedData(key, algorithm, data as CFData, &error)
            return (result as Data?, error?.takeRetainedValue())
        }

        static let secret = Data("attack at dawn".utf8)

        @Test func rsa() throws {
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeRSA, 2048)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            for algorithm: SecKeyAlgorithm in [
                .rsaEncryptionPKCS1, .rsaEncryptionOAEPSHA1, .rsaEncryptionOAEPSHA256, .rsaEncryptionOAEPSHA1AESGCM,
                .rsaEncryptionOAEPSHA256AESGCM,
            ] {
                #expect(SecKeyIsAlgorithmSupported(publicKey, .encrypt, algorithm))
                #expect(SecKeyIsAlgorithmSupported(privateKey, .decrypt, algorithm))
                let ciphertext = try #require(Self.encrypt(publicKey, algorithm, Self.secret).0, "\(algorithm.rawValue)")
                #expect(Self.decrypt(privateKey, algorithm, ciphertext).0 == Self.secret, "\(algorithm.rawValue)")
                var tampered = ciphertext
                tampered[tampered.count - 1] ^= 1
                let (none, error) = Self.decrypt(privateKey, algorithm, tampered)
                #expect(none == nil || none != Self.secret)
                if none == nil { #expect(error.map(CFErrorGetCode) == CFIndex(errSecParam)) }
            }
            // OAEP+AES-GCM: the wrapped key is one RSA block, then the message and a 16-byte tag.
            let sealed = try #require(Self.encrypt(publicKey, .rsaEncryptionOAEPSHA256AESGCM, Self.secret).0)
            #expect(sealed.count == 256 + Self.secret.count + 16)
            // Too long for one OAEP block.
            let (none, error) = Self.encrypt(publicKey, .rsaEncryptionOAEPSHA256, Data(count: 256))
            #expect(none == nil && error.map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(!SecKeyIsAlgorithmSupported(publicKey, .encrypt, .rsaEncryptionOAEPSHA512), "swift-crypto has no OAEP-SHA512")
        }

        @Test(arguments: [256, 384, 521])
        func ecies(bits: Int) throws {
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, bits)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let point = 1 + 2 * ((bits + 7) / 8)
            for algorithm: SecKeyAlgorithm in [
                .eciesEncryptionStandardX963SHA1AESGCM, .eciesEncryptionStandardX963SHA256AESGCM, .eciesEncryptionCofactorX963SHA384AESGCM,
                .eciesEncryptionStandardVariableIVX963SHA256AESGCM, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                .eciesEncryptionCofactorVariableIVX963SHA512AESGCM,
            ] {
                let ciphertext = try #require(Self.encrypt(publicKey, algorithm, Self.secret).0, "\(algorithm.rawValue)")
                #expect(ciphertext.count == point + Self.secret.count + 16, "ephemeral point ‖ ciphertext ‖ tag")
                #expect(Self.decrypt(privateKey, algorithm, ciphertext).0 == Self.secret, "\(algorithm.rawValue)")
                #expect(Self.decrypt(privateKey, algorithm, ciphertext.dropLast()).0 == nil, "one byte short")
            }
            let short = Self.decrypt(privateKey, .eciesEncryptionStandardX963SHA256AESGCM, Data(count: point - 1))
            #expect(short.0 == nil && short.1.map(CFErrorGetCode) == CFIndex(errSecParam))
            // A public key cannot decrypt, a private key cannot encrypt.
            #expect(Self.decrypt(publicKey, .eciesEncryptionStandardX963SHA256AESGCM, Data(count: 100)).1.map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(Self.encrypt(privateKey, .eciesEncryptionStandardX963SHA256AESGCM, Self.secret).1.map(CFErrorGetCode) == CFIndex(errSecParam))
        }

        @Test func keyExchange() throws {
            let alice = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let bob = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let alicePublic = try #require(SecKeyCopyPublicKey(alice)), bobPublic = try #require(SecKeyCopyPublicKey(bob))
            var error: Unmanaged<CFError>?
            let raw = try #require(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandard, bobPublic, [:] as CFDictionary, &error) as Data?)
            #expect(raw.count == 32)
            #expect(SecKeyCopyKeyExchangeResult(bob, .ecdhKeyExchangeCofactor, alicePublic, [:] as CFDictionary, &error) as Data? == raw)
            let parameters: [String: Any] = [
                SecKeyKeyExchangeParameter.requestedSize.rawValue as String: 48,
                SecKeyKeyExchangeParameter.sharedInfo.rawValue as String: Data("context".utf8),
            ]
            let derived = try #require(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandardX963SHA256, bobPublic, parameters as CFDictionary, &error) as Data?)
            #expect(derived.count == 48)
            #expect(SecKeyCopyKeyExchangeResult(bob, .ecdhKeyExchangeStandardX963SHA256, alicePublic, parameters as CFDictionary, &error) as Data? == derived)
            var missing: Unmanaged<CFError>?
            #expect(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandardX963SHA256, bobPublic, [:] as CFDictionary, &missing) == nil)
            #expect((missing?.takeRetainedValue()).map { CFErrorCopyDescription($0) as String } == "kSecKeyKeyExchangeParameterRequestedSize is missing")
            let other = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 384)
            #expect(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandard, try #require(SecKeyCopyPublicKey(other)), [:] as CFDictionary, nil) == nil, "another curve")
        }
    }
}
