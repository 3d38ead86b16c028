import Foundation
import Security
import Testing

/// Keys as keychain items, the way CryptoKit-style code stores them (Apple's article
/// "Storing CryptoKit Keys in the Keychain", Auth0's DPoP key store).
extension SecurityAPI {
    @Suite struct SecKeyItemTests {
        let tag = Data(SecurityAPI.useSharedKeychain().utf8)

        @Test func aKeyAddedByRefComesBackAsAWorkingKeyWithItsDerivedAttributes() throws {
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let add: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecValueRef as String: privateKey]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

            var item: CFTypeRef?
            let query: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
            let found = try #require(item as? SecKey)
            #expect(CFGetTypeID(found) == SecKeyGetTypeID())
            #expect(found == privateKey)
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            let signature = try #require(SecKeyTests.sign(found, .ecdsaSignatureMessageX962SHA256, Data("x".utf8)).0)
            #expect(SecKeyTests.verify(publicKey, .ecdsaSignatureMessageX962SHA256, Data("x".utf8), signature).0)

            var attributes: CFTypeRef?
            let withAttributes = query.merging([kSecReturnAttributes as String: true]) { $1 }
            #expect(SecItemCopyMatching(withAttributes as CFDictionary, &attributes) == errSecSuccess)
            let dictionary = try #require(attributes as? [String: Any])
            #expect(dictionary[kSecValueRef as String] as? SecKey == privateKey)
            #expect(dictionary[kSecValueData as String] == nil, "data only when asked for")
            #expect(dictionary[kSecAttrKeyClass as String] as? Int == 1, "kcls is a number column in Apple's schema")
            #expect(dictionary[kSecAttrKeySizeInBits as String] as? Int == 256)
            let label = try #require(SecKeyCopyAttributes(privateKey) as? [String: Any])[kSecAttrApplicationLabel as String] as? Data
            #expect(dictionary[kSecAttrApplicationLabel as String] as? Data == label, "klbl derived from the key")
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
        }

        @Test func theCallersAttributesWinOverTheKeys() throws {
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let own = Data("my-own-label".utf8)
            let add: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecAttrApplicationLabel as String: own,
                kSecValueRef as String: privateKey,
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var item: CFTypeRef?
            let query: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationLabel as String: own, kSecReturnRef as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
            #expect(item as? SecKey == privateKey)
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
        }

        @Test func aPermanentKeyPairStoresTheHalvesItsAttributesName() throws {
            let privateKey = try SecKeyTests.randomKey(
                kSecAttrKeyTypeECSECPrimeRandom, 256,
                [kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag]])
            var items: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &items) == errSecSuccess)
            let keys = try #require(items as? [SecKey])
            #expect(keys == [privateKey], "only the private half: the public one was not permanent")
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess)
        }

        @Test func aValueRefThatIsNotAKeyIsErrSecParam() {
            let add: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecValueRef as String: Data()]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecParam)
        }
    
        @Test func aSearchByRefFindsTheItemByWhatIdentifiesIt() throws {
            let privateKey = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            let other = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            for key in [privateKey, other] {
                // The caller's attributes win over the key's (it says this one cannot decrypt).
                let add: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecValueRef as String: key, kSecAttrCanDecrypt as String: false]
                #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
            // The search by ref finds it by what identifies it (its key label, class, type and
            // size), not by every attribute the key implies, and only it.
            let byRef: [String: Any] = [kSecClass as String: kSecClassKey, kSecValueRef as String: privateKey]
            #expect(SecItemUpdate(byRef as CFDictionary, [kSecAttrLabel: "renamed"] as CFDictionary) == errSecSuccess)
            var found: CFTypeRef?
            let query = byRef.merging([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 }
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let items = try #require(found as? [[String: Any]])
            #expect(items.count == 1 && items.first?[kSecAttrLabel as String] as? String == "renamed")
            #expect(SecItemDelete(byRef as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecItemNotFound)
            #expect(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary) == errSecSuccess, "the other key stays")
        }
    }
}
