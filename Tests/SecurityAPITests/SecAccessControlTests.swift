import Foundation
import Security
import Testing

extension SecurityAPI {
    @Suite struct SecAccessControlTests {
        let service = SecurityAPI.useSharedKeychain()

        func create(_ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags) -> (SecAccessControl?, CFError?) {
            var error: Unmanaged<CFError>?
            let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, &error)
            return (access, error?.takeRetainedValue())
        }

        @Test func validation() throws {
            #expect(create(kSecAttrAccessibleWhenUnlocked, []).0 != nil)
            #expect(create(kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.biometryAny, .or, .devicePasscode]).0 != nil)
            #expect(create(kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence).0 != nil)

            let (none, error) = create("sometimes" as CFString, .userPresence)
            #expect(none == nil)
            let failure = try #require(error)
            #expect(CFErrorGetCode(failure) == CFIndex(errSecParam))
            #expect(CFErrorGetDomain(failure) as String == NSOSStatusErrorDomain)
            #expect(create(kSecAttrAccessibleWhenUnlocked, [.biometryAny, .or, .and, .devicePasscode]).0 == nil, ".or with .and")
            #expect(create(kSecAttrAccessibleWhenUnlocked, SecAccessControlCreateFlags(rawValue: 1 << 20)).0 == nil, "unknown flags")
            #expect(create(kSecAttrAccessibleWhenUnlocked, [.biometryAny, .biometryCurrentSet]).0 == nil, "two biometry constraints")
            #expect(create(kSecAttrAccessibleWhenUnlocked, [.userPresence, .devicePasscode]).0 == nil, "userPresence with another")
            #expect(create(kSecAttrAccessibleWhenUnlocked, [.userPresence, .applicationPassword]).0 != nil)
            let (_, message) = create(kSecAttrAccessibleWhenUnlocked, [.userPresence, .or, .biometryAny])
            #expect((message.map { CFErrorCopyDescription($0) as String } ?? "").contains("kSecAccessControlUserPresence can be combined only with"))
            #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAlways, [.or, .and], nil) == nil, "no error pointer is fine")
        }

        func item(_ account: String, _ access: SecAccessControl?) -> [String: Any] {
            var item: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                kSecValueData as String: Data("x".utf8),
            ]
            item[kSecAttrAccessControl as String] = access
            return item
        }

        @Test func itsProtectionClassBecomesTheItems() throws {
            let access = try #require(create(kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, []).0)
            #expect(SecItemAdd(item("a", access) as CFDictionary, nil) == errSecSuccess)
            let search: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "a",
                kSecReturnAttributes as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)

            var disagreeing = item("b", access)
            disagreeing[kSecAttrAccessible as String] = kSecAttrAccessibleAlways
            #expect(SecItemAdd(disagreeing as CFDictionary, nil) == errSecParam)
        }

        /// This keychain has no passcode and its enclave no sensor: an access control that
        /// needs either could never be satisfied, so the item is refused, not stored unprotected.
        @Test func constraintsNobodyCouldSatisfyAreRefused() throws {
            for flags: SecAccessControlCreateFlags in [.userPresence, .biometryCurrentSet, .devicePasscode, [.devicePasscode, .and, .biometryAny]] {
                let access = try #require(create(kSecAttrAccessibleWhenUnlocked, flags).0)
                #expect(SecItemAdd(item("c", access) as CFDictionary, nil) == errSecAuthFailed, "flags \(flags.rawValue)")
            }
            for flags: SecAccessControlCreateFlags in [.privateKeyUsage, .companion] {
                let access = try #require(create(kSecAttrAccessibleWhenUnlocked, flags).0)
                #expect(SecItemAdd(item("c", access) as CFDictionary, nil) != errSecSuccess, "flags \(flags.rawValue)")
            }
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound, "nothing stored unprotected")
        }

        /// Apple refuses a synchronizable item whose access control has constraints
        /// (SecItem.m: "item with kSecAttrAccessControl is not synchronizable"); one with a
        /// protection class alone is fine.
        @Test func aSynchronizableItemCannotHaveOneWithConstraints() throws {
            let constrained: SecAccessControl = try #require(create(kSecAttrAccessibleWhenUnlocked, .userPresence).0)
            var synchronizable = item("d", constrained)
            synchronizable[kSecAttrSynchronizable as String] = true
            #expect(SecItemAdd(synchronizable as CFDictionary, nil) == errSecParam)
            let plain: SecAccessControl = try #require(create(kSecAttrAccessibleWhenUnlocked, []).0)
            var allowed = item("d", plain)
            allowed[kSecAttrSynchronizable as String] = true
            #expect(SecItemAdd(allowed as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary) == errSecSuccess)
            var notAnAccessControl = item("d", nil)
            notAnAccessControl[kSecAttrAccessControl as String] = "userPresence"
            #expect(SecItemAdd(notAnAccessControl as CFDictionary, nil) == errSecParam)
        }
    }
}
