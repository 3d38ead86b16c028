import Foundation
import Security
import Testing

/// What the wrapper libraries (keychain-swift, SwiftKeychainWrapper, KeychainAccess,
/// SimpleKeychain) rely on, each behaviour as Apple's keychain has it.
extension SecurityAPI {
    @Suite struct WrapperCompatibilityTests {
        let service = SecurityAPI.useSharedKeychain()

        @Test func noErrAndCFErrorCopyUserInfoExist() throws {
            var lastResultCode: OSStatus = noErr  // keychain-swift's declaration
            lastResultCode = SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrService: service] as CFDictionary)
            #expect(lastResultCode == errSecItemNotFound && noErr == errSecSuccess)

            var error: Unmanaged<CFError>?
            let key = try SecKeyTests.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
            #expect(SecKeyCreateSignature(key, .rsaSignatureMessagePKCS1v15SHA256, Data() as CFData, &error) == nil)
            let failure = try #require(error?.takeRetainedValue())
            // KeychainAccess's `CFError.error`.
            let userInfo = CFErrorCopyUserInfo(failure) as! [String: Any]
            #expect(CFErrorGetDomain(failure) as String == NSOSStatusErrorDomain && CFErrorGetCode(failure) == Int(errSecParam))
            #expect((userInfo[NSLocalizedDescriptionKey] as? String)?.isEmpty == false)
        }

        /// `kSec…` constants hash as the strings they hold, as on Apple platforms: a result read
        /// as `[AnyHashable: Any]` answers a lookup by constant, and two queries built alike
        /// compare equal.
        @Test func constantsHashAsTheirStrings() throws {
            #expect(AnyHashable(kSecAttrAccount) == AnyHashable("acct"))
            var add = SecurityAPI.genericPassword(service: service, account: "hashable")
            add[kSecValueData as String] = Data("x".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var found: AnyObject?
            let query = SecurityAPI.genericPassword(service: service, account: "hashable", [
                kSecReturnAttributes as String: kCFBooleanTrue!, kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let results = try #require(found as? [[AnyHashable: Any]])
            #expect(results.first?[kSecAttrAccount] as? String == "hashable", "looked up by the CFString constant")
            let one: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            let other: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            #expect(NSDictionary(dictionary: one).isEqual(to: other))
            #expect(AnyHashable(kSecClassGenericPassword) == AnyHashable(kSecClassGenericPassword as String))
            #expect(SecItemDelete(SecurityAPI.genericPassword(service: service, account: "hashable") as CFDictionary) == errSecSuccess)
        }

        /// SwiftKeychainWrapper keeps its keys as `Data` in `kSecAttrAccount`: Apple stores a
        /// blob attribute with the type it was given, matches it byte for byte, and returns
        /// it as it was stored. A `String` of the same bytes is another value (another
        /// primary key), as in Apple's SQLite, where a TEXT never equals a BLOB.
        @Test func dataAttributesAreStoredMatchedAndReturnedAsData() throws {
            let account = Data("swkw-key".utf8), serviceData = Data(service.utf8)
            let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: serviceData]
            var add = base
            add[kSecAttrAccount as String] = account
            add[kSecAttrLabel as String] = Data("label as data".utf8)
            add[kSecValueData as String] = Data("v1".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

            var found: CFTypeRef?
            let byData = base.merging([kSecAttrAccount as String: account, kSecReturnAttributes as String: true, kSecReturnData as String: true]) { $1 }
            #expect(SecItemCopyMatching(byData as CFDictionary, &found) == errSecSuccess)
            let item = try #require(found as? [String: Any])
            #expect(item[kSecAttrAccount as String] as? Data == account, "returned with the type it was stored with")
            #expect(item[kSecAttrService as String] as? Data == serviceData)
            #expect(item[kSecAttrLabel as String] as? Data == Data("label as data".utf8))
            #expect(item[kSecValueData as String] as? Data == Data("v1".utf8))

            // The String of the same bytes is another account: not found, and not a duplicate.
            let byString = base.merging([kSecAttrAccount as String: "swkw-key", kSecReturnData as String: true]) { $1 }
            #expect(SecItemCopyMatching(byString as CFDictionary, &found) == errSecItemNotFound)
            let stringService: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "swkw-key"]
            #expect(SecItemCopyMatching(stringService.merging([kSecReturnData as String: true]) { $1 } as CFDictionary, &found) == errSecItemNotFound)
            var stringAdd = base
            stringAdd[kSecAttrAccount as String] = "swkw-key"
            #expect(SecItemAdd(stringAdd as CFDictionary, nil) == errSecSuccess, "a String account is not the Data one")

            // Listing the keys as SwiftKeychainWrapper does: attributes of all, accounts as stored.
            let all = base.merging([kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true]) { $1 }
            #expect(SecItemCopyMatching(all as CFDictionary, &found) == errSecSuccess)
            let accounts = try #require(found as? [[String: Any]]).map { $0[kSecAttrAccount as String] }
            #expect(accounts.compactMap { $0 as? Data } == [account] && accounts.compactMap { $0 as? String } == ["swkw-key"])

            // Update and delete by Data touch only the Data item.
            #expect(SecItemUpdate(base.merging([kSecAttrAccount as String: account]) { $1 } as CFDictionary, [kSecValueData: Data("v2".utf8)] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byData as CFDictionary, &found) == errSecSuccess)
            #expect((found as? [String: Any])?[kSecValueData as String] as? Data == Data("v2".utf8))
            #expect(SecItemDelete(base.merging([kSecAttrAccount as String: account]) { $1 } as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byData as CFDictionary, &found) == errSecItemNotFound)
            #expect(SecItemDelete(stringAdd as CFDictionary) == errSecSuccess, "the String item was left alone")

            // Attributes Apple keeps as strings stay strings: an access group as Data is refused.
            #expect(SecItemAdd(add.merging([kSecAttrAccessGroup as String: Data("g".utf8)]) { $1 } as CFDictionary, nil) == errSecParam)
        }

        /// KeychainAccess's iOS tests add a synchronizable WhenUnlockedThisDeviceOnly item and
        /// read back `sync = true`: Apple's securityd stores it as asked.
        @Test func aSynchronizableThisDeviceOnlyItemIsStoredAsAsked() throws {
            var add = SecurityAPI.genericPassword(service: service, account: "sync-local")
            add[kSecAttrSynchronizable as String] = true
            add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            add[kSecValueData as String] = Data("local".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var found: CFTypeRef?
            let query = SecurityAPI.genericPassword(service: service, account: "sync-local", [
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecReturnAttributes as String: true,
            ])
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let item = try #require(found as? [String: Any])
            #expect(item[kSecAttrSynchronizable as String] as? Bool == true)
            #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)

            // And an update may make an item so.
            let plain = SecurityAPI.genericPassword(service: service, account: "made-local", [kSecValueData as String: Data("x".utf8)])
            #expect(SecItemAdd(plain as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemUpdate(
                    SecurityAPI.genericPassword(service: service, account: "made-local") as CFDictionary,
                    [kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrSynchronizable: true] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary) == errSecSuccess)
        }
    }
}
