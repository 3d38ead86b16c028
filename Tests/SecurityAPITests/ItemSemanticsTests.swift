import Foundation
import KeychainTestSupport
import Security
import Testing

// Synchronizable and kSecAttrSynchronizableAny, accessibility, persistent references and
// access groups through the SecItem functions, as Apple-platform code uses them.

extension SecurityAPI {
    @Suite struct ItemSemanticsTests {
        let service = SecurityAPI.useSharedKeychain()

        func query(_ account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
            SecurityAPI.genericPassword(service: service, account: account, extra)
        }

        func secrets(_ search: [String: Any]) -> [String] {
            var search = search
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            guard SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess else { return [] }
            return (result as? [Data] ?? []).map { String(decoding: $0, as: UTF8.self) }.sorted()
        }

        @Test func synchronizableIsPartOfTheKeyAndQueriesSeeLocalItemsUnlessAsked() {
            #expect(SecItemAdd(query("a", [kSecValueData as String: Data("local".utf8)]) as CFDictionary, nil) == errSecSuccess)
            let synced = query("a", [kSecValueData as String: Data("synced".utf8), kSecAttrSynchronizable as String: kCFBooleanTrue!])
            #expect(SecItemAdd(synced as CFDictionary, nil) == errSecSuccess, "same account and service, other sync: another item")
            #expect(SecItemAdd(synced as CFDictionary, nil) == errSecDuplicateItem)

            #expect(secrets(query("a")) == ["local"], "a query without kSecAttrSynchronizable sees local items only")
            #expect(secrets(query("a", [kSecAttrSynchronizable as String: true])) == ["synced"])
            #expect(secrets(query("a", [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])) == ["local", "synced"])

            let any = query("a", [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])
            #expect(SecItemUpdate(any as CFDictionary, [kSecAttrLabel as String: "both"] as CFDictionary) == errSecSuccess)
            var attributes = any
            attributes[kSecReturnAttributes as String] = true
            attributes[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(attributes as CFDictionary, &result) == errSecSuccess)
            let items = result as? [[String: Any]] ?? []
            #expect(items.count == 2 && items.allSatisfy { $0[kSecAttrLabel as String] as? String == "both" })
            #expect(Set(items.compactMap { $0[kSecAttrSynchronizable as String] as? Bool }) == [true, false])

            #expect(SecItemDelete(any as CFDictionary) == errSecSuccess)
            #expect(secrets(any).isEmpty)
        }

        @Test func synchronizableRules() {
            let anyOnAdd = query("b", [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])
            #expect(SecItemAdd(anyOnAdd as CFDictionary, nil) == errSecParam, "SynchronizableAny is a query value, not an attribute")
            // Apple's securityd stores a synchronizable ThisDeviceOnly item as asked
            // (WrapperCompatibilityTests); its class keys keep it on the device.
            let deviceOnly = query("b", [kSecAttrSynchronizable as String: true, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly])
            #expect(SecItemAdd(deviceOnly as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemDelete(query("b", [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]) as CFDictionary) == errSecSuccess)
        }

        @Test(arguments: 0..<6)
        func everyAccessibilityIsStoredAndReported(_ index: Int) throws {
            let accessible = [
                kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
                kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                kSecAttrAccessibleAlwaysThisDeviceOnly,
            ][index]
            #expect(SecItemAdd(query("c", [kSecValueData as String: Data("x".utf8), kSecAttrAccessible as String: accessible]) as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query("c", [kSecReturnAttributes as String: true]) as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessible as String] as? String == accessible as String)
            #expect(secrets(query("c", [kSecAttrAccessible as String: accessible])) == ["x"], "pdmn is also a search attribute")
        }

        @Test func passcodeClassNeedsAPasscode() {
            let item = query("d", [kSecValueData as String: Data("x".utf8), kSecAttrAccessible as String: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly])
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecAuthFailed, "no passcode is set on the shared keychain")
            #expect(secrets(query("d")).isEmpty)
        }

        @Test func persistentReferences() throws {
            var item = query("e", [kSecValueData as String: Data("by reference".utf8), kSecReturnPersistentRef as String: true])
            var added: CFTypeRef?
            #expect(SecItemAdd(item as CFDictionary, &added) == errSecSuccess)
            let reference = try #require(added as? Data)

            let byReference: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
            var found: CFTypeRef?
            #expect(SecItemCopyMatching(byReference as CFDictionary, &found) == errSecSuccess)
            #expect(found as? Data == Data("by reference".utf8))

            // The same reference after the daemon restarts.
            DaemonControl.stop(home: SecurityAPI.sharedKeychain.home)
            found = nil
            #expect(SecItemCopyMatching(byReference as CFDictionary, &found) == errSecSuccess)
            #expect(found as? Data == Data("by reference".utf8))

            var withAttributes = byReference
            withAttributes[kSecAttrAccount as String] = "e"
            #expect(SecItemCopyMatching(withAttributes as CFDictionary, &found) == errSecParam, "a reference names the item alone")
            let malformed: [String: Any] = [kSecValuePersistentRef as String: reference.prefix(10)]
            #expect(SecItemCopyMatching(malformed as CFDictionary, &found) == errSecParam)

            #expect(SecItemUpdate([kSecValuePersistentRef as String: reference] as CFDictionary, [kSecAttrLabel as String: "L"] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete([kSecValuePersistentRef as String: reference] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byReference as CFDictionary, &found) == errSecItemNotFound)
            item[kSecReturnPersistentRef as String] = nil
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess, "the deleted item's key is free again")
        }

        @Test func anUnsignedProcessHasItsImplicitGroupAndNoOther() throws {
            #expect(SecItemAdd(query("f", [kSecValueData as String: Data("x".utf8)]) as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query("f", [kSecReturnAttributes as String: true]) as CFDictionary, &result) == errSecSuccess)
            let group = try #require((result as? [String: Any])?[kSecAttrAccessGroup as String] as? String)
            #expect(group.hasPrefix("unsigned."), "the implicit group of an unsigned executable")

            #expect(secrets(query("f", [kSecAttrAccessGroup as String: group])) == ["x"], "naming its own group")
            let other = query("f", [kSecAttrAccessGroup as String: "ABCDE12345.com.example.shared"])
            #expect(SecItemAdd(other.merging([kSecValueData as String: Data()]) { $1 } as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(SecItemCopyMatching(other as CFDictionary, &result) == errSecMissingEntitlement)
            #expect(SecItemDelete(other as CFDictionary) == errSecMissingEntitlement)
            #expect(
                SecItemUpdate(query("f") as CFDictionary, [kSecAttrAccessGroup as String: "ABCDE12345.com.example.shared"] as CFDictionary)
                    == errSecMissingEntitlement, "nor move an item there")
        }

        @Test func dataProtectionKeychainFlagIsAccepted() {
            let item = query("g", [kSecValueData as String: Data("x".utf8), kSecUseDataProtectionKeychain as String: true])
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            #expect(secrets(query("g", [kSecUseDataProtectionKeychain as String: true])) == ["x"])
            #expect(SecItemDelete(query("g", [kSecUseDataProtectionKeychain as String: true]) as CFDictionary) == errSecSuccess)
        }
    }
}
