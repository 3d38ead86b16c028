import Foundation
import Security
import Testing

// The wrapper-library fixture (Fixtures/KeychainWrapper.swift) against a real daemon: it
// must behave as it does on iOS.

extension SecurityAPI {
    @Suite struct KeychainWrapperTests {
        let service = SecurityAPI.useSharedKeychain()

        /// What the keychain holds for `key`, read with SecItem directly.
        func stored(_ key: String) -> [[String: Any]] {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: key,
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecReturnAttributes as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            // Not found is an empty list; any other failure is one, not an empty list.
            #expect(status == errSecSuccess || status == errSecItemNotFound, "SecItemCopyMatching: \(status)")
            return result as? [[String: Any]] ?? []
        }

        @Test func subscriptGetSetAndRemove() {
            let keychain = KeychainWrapper(service: service)
            #expect(keychain["token"] == nil)
            keychain["token"] = "abc"
            #expect(keychain["token"] == "abc")
            keychain["token"] = "def"
            #expect(keychain["token"] == "def", "add, then update on duplicate")
            #expect(stored("token").count == 1)
            keychain[data: "blob"] = Data([0, 255, 1])
            #expect(keychain[data: "blob"] == Data([0, 255, 1]))
            #expect(throws: KeychainWrapper.Failure(status: errSecDecode)) { try keychain.get("blob") }
            keychain["token"] = nil
            #expect(keychain["token"] == nil && stored("token").isEmpty)
        }

        @Test func chainedOptionsReachTheItem() throws {
            let keychain = KeychainWrapper(service: service).accessibility(.afterFirstUnlockThisDeviceOnly).label("Example token")
            keychain["device"] = "1"
            let item = stored("device").first
            #expect(item?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)
            #expect(item?[kSecAttrLabel as String] as? String == "Example token")
            #expect(item?[kSecAttrSynchronizable as String] as? Bool == false)

            let synced = KeychainWrapper(service: service).synchronizable(true).accessibility(.afterFirstUnlock)
            synced["cloud"] = "2"
            #expect(stored("cloud").first?[kSecAttrSynchronizable as String] as? Bool == true)
            #expect(KeychainWrapper(service: service)["cloud"] == "2", "reads see synchronizable items (SynchronizableAny)")

            // Synchronizable and ThisDeviceOnly: stored as asked, as Apple's securityd does.
            let local = KeychainWrapper(service: service).synchronizable(true).accessibility(.whenUnlockedThisDeviceOnly)
            try local.set("3", key: "local")
            #expect(stored("local").first?[kSecAttrSynchronizable as String] as? Bool == true)
        }

        @Test func allKeysAndRemoveAll() throws {
            let keychain = KeychainWrapper(service: service)
            let other = KeychainWrapper(service: service + ".other")
            for key in ["c", "a", "b"] { keychain[key] = key.uppercased() }
            other["z"] = "Z"
            #expect(keychain.allKeys() == ["a", "b", "c"])
            try keychain.removeAll()
            #expect(keychain.allKeys().isEmpty)
            #expect(other.allKeys() == ["z"], "another service is untouched")
            try keychain.removeAll()  // nothing left: not an error
        }

        @Test func accessGroupsOfTheProcess() throws {
            let foreign = KeychainWrapper(service: service, accessGroup: "ABCDE12345.com.example.shared")
            #expect(throws: KeychainWrapper.Failure(status: errSecMissingEntitlement)) { try foreign.set("x", key: "k") }
            #expect(foreign.allKeys().isEmpty)
            let failure = KeychainWrapper.Failure(status: errSecMissingEntitlement)
            #expect(failure.message == "A required entitlement isn't present.")
        }
    }
}
