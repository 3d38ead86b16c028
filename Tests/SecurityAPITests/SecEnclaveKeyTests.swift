import Foundation
import LocalAuthentication
import Security
import Testing

/// Enclave keys as CryptoKit-less Apple code makes them (`kSecAttrTokenIDSecureEnclave`):
/// a P-256 private key made and used in the enclave process, never exported; its public
/// key an ordinary one. Access controls on them: SecurityDaemonTests/AccessControlTests.
extension SecurityAPI {
    @Suite struct SecEnclaveKeyTests {
        let service = SecurityAPI.useSharedKeychain()

        static func enclaveKey(_ privateAttributes: [String: Any] = [:]) throws -> SecKey {
            try SecKeyTests.randomKey(
                kSecAttrKeyTypeECSECPrimeRandom, 256,
                [kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave, kSecPrivateKeyAttrs as String: privateAttributes])
        }

        @Test func itSignsDecryptsAndAgreesButIsNeverExported() throws {
            let key = try Self.enclaveKey()
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
            #expect(attributes[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
            #expect(attributes[kSecAttrIsExtractable as String] as? Bool == false)
            #expect(SecKeyGetBlockSize(key) == 32)

            var error: Unmanaged<CFError>?
            #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
            #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == CFIndex(errSecUnimplemented))
            let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
            #expect(publicBytes.count == 65 && publicBytes.first == 4)

            for algorithm: SecKeyAlgorithm in [.ecdsaSignatureMessageX962SHA256, .ecdsaSignatureMessageRFC4754SHA384, .ecdsaSignatureDigestX962SHA256] {
                #expect(SecKeyIsAlgorithmSupported(key, .sign, algorithm))
                let data = algorithm == .ecdsaSignatureDigestX962SHA256 ? Data(repeating: 9, count: 32) : SecKeyTests.message
                let signature = try #require(SecKeyTests.sign(key, algorithm, data).0, "\(algorithm.rawValue)")
                #expect(SecKeyTests.verify(publicKey, algorithm, data, signature).0, "\(algorithm.rawValue)")
            }
            #expect(!SecKeyIsAlgorithmSupported(key, .sign, .rsaSignatureMessagePKCS1v15SHA256))
            let (none, refused) = SecKeyTests.sign(key, .rsaSignatureMessagePKCS1v15SHA256, SecKeyTests.message)
            #expect(none == nil && refused.map(CFErrorGetCode) == CFIndex(errSecParam))

            // ECIES to the public key, decrypted in the enclave; one byte short is refused.
            let ciphertext = try #require(SecKeyEncryptionTests.encrypt(publicKey, .eciesEncryptionStandardVariableIVX963SHA256AESGCM, Data("to the enclave".utf8)).0)
            #expect(SecKeyEncryptionTests.decrypt(key, .eciesEncryptionStandardVariableIVX963SHA256AESGCM, ciphertext).0 == Data("to the enclave".utf8))
            #expect(SecKeyEncryptionTests.decrypt(key, .eciesEncryptionStandardVariableIVX963SHA256AESGCM, ciphertext.dropLast()).1 != nil)

            // ECDH with a software key agrees both ways.
            let other = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let otherPublic = try #require(SecKeyCopyPublicKey(other))
            let parameters = [SecKeyKeyExchangeParameter.requestedSize.rawValue: 32] as CFDictionary
            let ours = try #require(SecKeyCopyKeyExchangeResult(key, .ecdhKeyExchangeStandardX963SHA256, otherPublic, parameters, nil) as Data?)
            let theirs = try #require(SecKeyCopyKeyExchangeResult(other, .ecdhKeyExchangeStandardX963SHA256, publicKey, parameters, nil) as Data?)
            #expect(ours == theirs && ours.count == 32)
            #expect(key == key && key != other && CFGetTypeID(key) == SecKeyGetTypeID())
        }

        @Test func onlyP256AndOnlyThisToken() throws {
            for (type, bits) in [(kSecAttrKeyTypeECSECPrimeRandom, 384), (kSecAttrKeyTypeRSA, 2048)] {
                var error: Unmanaged<CFError>?
                let parameters: [String: Any] = [kSecAttrKeyType as String: type, kSecAttrKeySizeInBits as String: bits, kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave]
                #expect(SecKeyCreateRandomKey(parameters as CFDictionary, &error) == nil)
                #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == CFIndex(errSecParam))
            }
            var error: Unmanaged<CFError>?
            let unknown: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256, kSecAttrTokenID as String: "com.example.token"]
            #expect(SecKeyCreateRandomKey(unknown as CFDictionary, &error) == nil)
            #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == CFIndex(errSecItemNotFound))
        }

        /// A permanent enclave key is an item whose data is its blob: found by tag, it
        /// signs; its item holds no private key, and its class is ThisDeviceOnly.
        @Test func aPermanentKeyIsAnItemThatComesBackAndSigns() throws {
            let tag = Data(service.utf8)
            let key = try Self.enclaveKey([kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked])
            var found: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true,
                kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let item = try #require(found as? [String: Any])
            let back = try #require(item[kSecValueRef as String].map { $0 as AnyObject } as? SecKey)
            #expect(back == key)
            #expect(item[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String, "never migrates")
            let signature = try #require(SecKeyTests.sign(back, .ecdsaSignatureMessageX962SHA256, SecKeyTests.message).0)
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            #expect(SecKeyTests.verify(publicKey, .ecdsaSignatureMessageX962SHA256, SecKeyTests.message, signature).0)

            // The item's data is the blob: no 32-byte private scalar can be found in it that
            // makes the public key (the enclave's wrapping hides it).
            var data: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecReturnData: true] as CFDictionary, &data) == errSecSuccess)
            let blob = try #require(data as? Data)
            let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
            for start in 0...(blob.count - 32) {
                let candidate = publicBytes + blob[blob.startIndex + start..<blob.startIndex + start + 32]
                let attributes: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate]
                if let made = SecKeyCreateWithData(candidate as CFData, attributes as CFDictionary, nil) {
                    #expect(SecKeyCopyPublicKey(made) != SecKeyCopyPublicKey(key), "the private key is in the item in the clear")
                }
            }
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
        }

        /// An access control on an enclave key, through LAContext: this keychain has no
        /// passcode and no sensor, so the application password is the constraint every run
        /// can satisfy. The key is made with the password set on its context, signs in that
        /// context, and refuses another context's wrong password or a context that may not ask.
        @Test func anApplicationPasswordGuardsTheKeyThroughLAContext() throws {
            var error: Unmanaged<CFError>?
            let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, .applicationPassword], &error))
            let context = LAContext()
            #expect(context.setCredential(Data("key-pw".utf8), type: .applicationPassword))
            let tag = Data(service.utf8)
            let key = try Self.enclaveKey([
                kSecAttrAccessControl as String: access, kSecUseAuthenticationContext as String: context, kSecAttrIsPermanent as String: true,
                kSecAttrApplicationTag as String: tag,
            ])
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            let signature = try #require(SecKeyTests.sign(key, .ecdsaSignatureMessageX962SHA256, SecKeyTests.message).0)
            #expect(SecKeyTests.verify(publicKey, .ecdsaSignatureMessageX962SHA256, SecKeyTests.message, signature).0)

            func stored(_ context: LAContext) throws -> SecKey {
                var found: CFTypeRef?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true,
                    kSecUseAuthenticationContext as String: context,
                ]
                #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess, "finding the key asks for nothing")
                return try #require(found.map { $0 as AnyObject } as? SecKey)
            }
            let wrong = LAContext()
            wrong.setCredential(Data("guess".utf8), type: .applicationPassword)
            #expect(SecKeyTests.sign(try stored(wrong), .ecdsaSignatureMessageX962SHA256, SecKeyTests.message).1.map(CFErrorGetCode) == CFIndex(errSecAuthFailed))
            let silent = LAContext()
            silent.interactionNotAllowed = true
            #expect(SecKeyTests.sign(try stored(silent), .ecdsaSignatureMessageX962SHA256, SecKeyTests.message).1.map(CFErrorGetCode) == CFIndex(errSecInteractionNotAllowed))
            let right = LAContext()
            right.setCredential(Data("key-pw".utf8), type: .applicationPassword)
            #expect(SecKeyTests.sign(try stored(right), .ecdsaSignatureMessageX962SHA256, SecKeyTests.message).0 != nil)
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
        }
    }
}
