import KeychainTestSupport
import Security
import Testing

// Written the way keychain code is written on Apple platforms: dictionary queries,
// `as CFDictionary`, `kSec*` constants and OSStatus checks. Only the first lines of
// `SecItemTests.init` are Linux-specific (which keychain the test process uses).

extension SecurityAPI {
    @Suite struct SecItemTests {
        let service: String

        init() {
            service = SecurityAPI.useSharedKeychain()  // each test its own items
        }

        func genericPassword(_ account: String) -> [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        }

        @Test func addThenCopyTheData() {
            var query = genericPassword("alice")
            query[kSecValueData as String] = "s3cret".data(using: .utf8)!
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)

            var search = genericPassword("alice")
            search[kSecReturnData as String] = kCFBooleanTrue!
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            let data = item as? Data
            #expect(data.map { String(decoding: $0, as: UTF8.self) } == "s3cret")
            #expect(SecurityAPI.sharedKeychain.daemons().count == 1, "through the test keychain's own daemon")
        }

        @Test func attributesAndPersistentReferences() throws {
            var query = genericPassword("bob")
            query[kSecValueData as String] = Data([1, 2, 3])
            query[kSecAttrLabel as String] = "Bob's token"
            query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)

            var search = genericPassword("bob")
            search[kSecReturnAttributes as String] = true
            search[kSecReturnData as String] = true
            search[kSecReturnPersistentRef as String] = true
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            let attributes = try #require(item as? [String: Any])
            #expect(attributes[kSecAttrLabel as String] as? String == "Bob's token")
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
            #expect(attributes[kSecValueData as String] as? Data == Data([1, 2, 3]))
            let reference = try #require(attributes[kSecValuePersistentRef as String] as? Data)

            let byReference: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
            var found: CFTypeRef?
            #expect(SecItemCopyMatching(byReference as CFDictionary, &found) == errSecSuccess)
            #expect(found as? Data == Data([1, 2, 3]))
        }

        @Test func duplicatesUpdatesAndDeletes() {
            var query = genericPassword("carol")
            query[kSecValueData as String] = Data("one".utf8)
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecDuplicateItem)

            let changes: [String: Any] = [kSecValueData as String: Data("two".utf8)]
            #expect(SecItemUpdate(genericPassword("carol") as CFDictionary, changes as CFDictionary) == errSecSuccess)
            var search = genericPassword("carol")
            search[kSecReturnData as String] = kCFBooleanTrue
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            #expect(item as? Data == Data("two".utf8))

            #expect(SecItemDelete(genericPassword("carol") as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecItemNotFound)
            #expect(SecItemDelete(genericPassword("carol") as CFDictionary) == errSecItemNotFound)
        }

        @Test func matchLimitAllReturnsAnArrayAndDeleteAcceptsIt() throws {
            for account in ["a", "b", "c"] {
                var query = genericPassword(account)
                query[kSecValueData as String] = Data(account.utf8)
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            }
            let all: [String: AnyObject] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service as NSString,
                kSecReturnAttributes as String: kCFBooleanTrue, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            var items: CFTypeRef?
            #expect(SecItemCopyMatching(all as CFDictionary, &items) == errSecSuccess)
            let accounts = try #require(items as? [[String: Any]]).compactMap { $0[kSecAttrAccount as String] as? String }
            #expect(accounts.sorted() == ["a", "b", "c"])

            let deleteAll: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            #expect(SecItemDelete(deleteAll as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(all as CFDictionary, &items) == errSecItemNotFound)
        }

        @Test func internetPasswords() {
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: service, kSecAttrAccount as String: "dave",
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
                kSecAttrPort as String: 443, kSecValueData as String: Data("pw".utf8),
            ]
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            let search: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: service,
                kSecReturnAttributes as String: true,
            ]
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            let attributes = item as? [String: Any]
            #expect(attributes?[kSecAttrProtocol as String] as? String == "htps")
            #expect(attributes?[kSecAttrPort as String] as? Int == 443)
        }

        @Test func errorsAreApplesCodes() {
            var noClass: [String: Any] = [kSecAttrAccount as String: "x"]
            #expect(SecItemCopyMatching(noClass as CFDictionary, nil) == errSecParam)
            noClass[kSecClass as String] = "nope"
            #expect(SecItemAdd(noClass as CFDictionary, nil) == errSecNoSuchClass)
            var unknown = genericPassword("e")
            unknown["zzzz"] = "?"
            #expect(SecItemAdd(unknown as CFDictionary, nil) == errSecNoSuchAttr)
            var otherGroup = genericPassword("e")
            otherGroup[kSecAttrAccessGroup as String] = "ABCDE12345.not.mine"
            #expect(SecItemAdd(otherGroup as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) as String? == "The specified item could not be found in the keychain.")
        }

        @Test func constantsHaveApplesRawValues() {
            #expect(kSecClass as String == "class" && String(kSecAttrAccount) == "acct")
            #expect(kSecAttrProtocolFTP as String == "ftp " && kSecAttrAuthenticationTypeDefault as String == "dflt")
            #expect(kSecUseDataProtectionKeychain as String == "nleg" && kSecAttrSynchronizableAny as String == "syna")
            #expect(errSecMissingEntitlement == -34018 && errSecInteractionNotAllowed == -25308)
        }

        @Test func randomBytes() {
            var first = [UInt8](repeating: 0, count: 33)
            var second = [UInt8](repeating: 0, count: 33)
            #expect(SecRandomCopyBytes(kSecRandomDefault, first.count, &first) == errSecSuccess)
            #expect(SecRandomCopyBytes(kSecRandomDefault, second.count, &second) == errSecSuccess)
            #expect(first != second && first != [UInt8](repeating: 0, count: 33))
        }
    }
}
