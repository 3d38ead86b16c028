import Foundation
import GRDB
import KeychainTestSupport
import Security
import Testing

// Every error of the SecItem functions, with Apple's OSStatus, as Apple-platform code checks
// them; and that a refused call changes nothing.

extension SecurityAPI {
    @Suite struct ErrorTests {
        let service = SecurityAPI.useSharedKeychain()

        func query(_ account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
            SecurityAPI.genericPassword(service: service, account: account, extra)
        }

        func secret(_ account: String) -> String? {
            var result: CFTypeRef?
            guard SecItemCopyMatching(query(account, [kSecReturnData as String: true]) as CFDictionary, &result) == errSecSuccess else { return nil }
            return (result as? Data).map { String(decoding: $0, as: UTF8.self) }
        }

        @Test func classErrors() {
            var item: [String: Any] = [kSecAttrAccount as String: "a"]
            #expect(SecItemCopyMatching(item as CFDictionary, nil) == errSecParam, "no class")
            item[kSecClass as String] = 42
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecParam, "a class that is not a string")
            item[kSecClass as String] = "nope"
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecNoSuchClass)
            #expect(SecItemAdd([kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "x"] as CFDictionary, nil) == errSecParam,
                    "identities are made of a certificate and a key, not added")
        }

        @Test func attributeErrors() {
            let wrongTypes: [(CFString, Any)] = [
                (kSecAttrAccount, 1), (kSecAttrAccessGroup, Data([1])), (kSecAttrLabel, true), (kSecAttrGeneric, 2),
                (kSecAttrIsInvisible, "yes"), (kSecAttrCreator, "abcd"), (kSecAttrAccessible, "always"),
                (kSecAttrAccessGroup, ""), (kSecAttrSynchronizable, "yes"), (kSecAttrAccount, ["a"]),
            ]
            for (name, value) in wrongTypes {
                #expect(SecItemCopyMatching(query("a", [name as String: value]) as CFDictionary, nil) == errSecParam, "\(name)")
            }
            #expect(SecItemAdd(query("a", [kSecValueData as String: "a string, not data"]) as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(query("a", [kSecAttrAccount as String: NSObject()]) as CFDictionary, nil) == errSecParam,
                    "a value of no property-list type")
            let numberKey: NSDictionary = [kSecClass as String: kSecClassGenericPassword, 7: "x"]
            #expect(SecItemAdd(numberKey, nil) == errSecParam, "a key that is not a string")
            #expect(SecItemAdd(query("a", ["zzzz": "?"]) as CFDictionary, nil) == errSecNoSuchAttr)
            #expect(SecItemAdd(query("a", [kSecAttrServer as String: "example.com"]) as CFDictionary, nil) == errSecNoSuchAttr,
                    "an attribute of another class")
            #expect(SecItemAdd(query("a", [kSecAttrCreationDate as String: Date()]) as CFDictionary, nil) == errSecParam, "set by the keychain")
            #expect(SecItemAdd(query("a", ["sha1": Data([1])]) as CFDictionary, nil) == errSecParam, "internal to the keychain")
            let big = String(repeating: "x", count: 1 << 20)
            #expect(SecItemAdd(query(big) as CFDictionary, nil) == errSecDataTooLarge)
            #expect(SecItemAdd(query("a", [kSecValueData as String: Data(count: (1 << 20) + 1)]) as CFDictionary, nil) == errSecDataTooLarge)
            #expect(SecItemAdd(query("a", [kSecValueData as String: Data(count: 3 << 20)]) as CFDictionary, nil) == errSecDataTooLarge,
                    "larger than a request may be: refused before it is sent, not a cut connection")
            #expect(secret("a") == nil, "nothing was added")
        }

        @Test func optionErrors() {
            #expect(SecItemAdd(query("o", [kSecValueData as String: Data("1".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(query("o", [kSecMatchLimit as String: "many"]) as CFDictionary, nil) == errSecParam)
            #expect(SecItemCopyMatching(query("o", [kSecMatchLimit as String: 0]) as CFDictionary, nil) == errSecParam)
            #expect(SecItemCopyMatching(query("o", [kSecReturnData as String: "yes"]) as CFDictionary, nil) == errSecParam)
            #expect(SecItemCopyMatching(query("o", [kSecMatchCaseInsensitive as String: true]) as CFDictionary, nil) == errSecUnimplemented)
            #expect(SecItemDelete(query("o", [kSecReturnData as String: true]) as CFDictionary) == errSecParam)
            for extra: [String: Any] in [[kSecReturnAttributes as String: true], [kSecMatchLimit as String: kSecMatchLimitOne]] {
                #expect(SecItemUpdate(query("o", extra) as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecParam)
            }
            #expect(secret("o") == "1", "no refused call deleted or changed it")
        }

        @Test func updateErrors() {
            #expect(SecItemAdd(query("u1", [kSecValueData as String: Data("1".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(query("u2", [kSecValueData as String: Data("2".utf8)]) as CFDictionary, nil) == errSecSuccess)
            let u2 = query("u2") as CFDictionary
            #expect(SecItemUpdate(u2, [kSecAttrAccount as String: "u1"] as CFDictionary) == errSecDuplicateItem, "onto another item's key")
            #expect(SecItemUpdate(u2, [kSecValueData as String: "not data"] as CFDictionary) == errSecParam)
            #expect(SecItemUpdate(u2, [kSecClass as String: kSecClassInternetPassword] as CFDictionary) == errSecParam)
            #expect(SecItemUpdate(u2, [:] as CFDictionary) == errSecParam)
            #expect(SecItemUpdate(u2, ["bogus": "x"] as CFDictionary) == errSecNoSuchAttr)
            #expect(SecItemUpdate(query("u3") as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecItemNotFound)
            #expect(secret("u1") == "1" && secret("u2") == "2")
        }

        @Test func notFoundAndDuplicate() {
            #expect(SecItemCopyMatching(query("n") as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemCopyMatching(query("n", [kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemDelete(query("n") as CFDictionary) == errSecItemNotFound)
            #expect(SecItemAdd(query("n", [kSecValueData as String: Data("1".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(query("n", [kSecValueData as String: Data("2".utf8)]) as CFDictionary, nil) == errSecDuplicateItem)
            #expect(secret("n") == "1")
        }

        @Test func messagesAreApples() {
            let messages: [(OSStatus, String)] = [
                (errSecSuccess, "No error."),
                (errSecParam, "One or more parameters passed to a function were not valid."),
                (errSecDuplicateItem, "The specified item already exists in the keychain."),
                (errSecItemNotFound, "The specified item could not be found in the keychain."),
                (errSecInteractionNotAllowed, "User interaction is not allowed."),
                (errSecDecode, "Unable to decode the provided data."),
                (errSecCertificateExpired, "An expired certificate was detected."),
                (errSecTimestampRevocationNotification, "A timestamp authority revocation notification was issued."),
            ]
            for (status, message) in messages {
                #expect(SecCopyErrorMessageString(status, nil) as String? == message)
            }
        }
    }

    /// A keychain of its own: locked with a password, then unlocked.
    @Suite struct LockedKeychainTests {
        @Test func aLockedKeychainRefusesWhenUnlockedItemsAndServesAfterFirstUnlockOnes() throws {
            let keychain = try DaemonKeychain()
            SecurityAPI.use(keychain)
            defer { SecurityAPI.use(SecurityAPI.sharedKeychain) }
            func security(_ arguments: String...) throws -> CommandResult {
                try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
            }
            let ak: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "ak"]
            var cku: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "cku"]
            #expect(SecItemAdd(ak.merging([kSecValueData as String: Data("a".utf8)]) { $1 } as CFDictionary, nil) == errSecSuccess)
            cku[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            #expect(SecItemAdd(cku.merging([kSecValueData as String: Data("c".utf8)]) { $1 } as CFDictionary, nil) == errSecSuccess)

            #expect(try security("set-keychain-password", "-p", "correct horse").status == 0)
            #expect(try security("lock-keychain").status == 0)
            var result: CFTypeRef?
            let readAK = ak.merging([kSecReturnData as String: true]) { $1 }
            #expect(SecItemCopyMatching(readAK as CFDictionary, &result) == errSecInteractionNotAllowed)
            #expect(SecItemAdd(ak.merging([kSecAttrAccount as String: "ak2"]) { $1 } as CFDictionary, nil) == errSecInteractionNotAllowed)
            #expect(SecItemCopyMatching(cku.merging([kSecReturnData as String: true]) { $1 } as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("c".utf8), "AfterFirstUnlock items stay readable while locked")

            #expect(try security("unlock-keychain", "-p", "correct horse").status == 0)
            #expect(SecItemCopyMatching(readAK as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("a".utf8))
            let akpu: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "akpu",
                kSecAttrAccessible as String: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
            ]
            #expect(SecItemAdd(akpu as CFDictionary, nil) == errSecSuccess, "with a passcode, akpu items can be added")
        }
    }

    /// A keychain of its own whose database file is edited behind the daemon's back.
    @Suite struct TamperedItemTests {
        @Test func swappedSecretsReadAsDecodeErrorsAndOtherItemsAreFine() throws {
            let keychain = try DaemonKeychain()
            SecurityAPI.use(keychain)
            defer { SecurityAPI.use(SecurityAPI.sharedKeychain) }
            for account in ["a", "b", "c"] {
                let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account, kSecValueData as String: Data(account.utf8)]
                #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            }
            let database = try DatabaseQueue(path: keychain.paths.database)
            try database.write { db in
                let rows = try Row.fetchAll(db, sql: "SELECT rowid, secret FROM genp ORDER BY rowid LIMIT 2")
                try db.execute(sql: "UPDATE genp SET secret = ? WHERE rowid = ?", arguments: [rows[1]["secret"] as Data, rows[0]["rowid"] as Int64])
                try db.execute(sql: "UPDATE genp SET secret = ? WHERE rowid = ?", arguments: [rows[0]["secret"] as Data, rows[1]["rowid"] as Int64])
            }
            func read(_ account: String) -> (OSStatus, Data?) {
                let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account, kSecReturnData as String: true]
                var result: CFTypeRef?
                let status = SecItemCopyMatching(query as CFDictionary, &result)
                return (status, result as? Data)
            }
            #expect(read("a").0 == errSecDecode && read("b").0 == errSecDecode, "a secret moved to another row does not open")
            #expect(read("c") == (errSecSuccess, Data("c".utf8)))
            let another: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "d", kSecValueData as String: Data()]
            #expect(SecItemAdd(another as CFDictionary, nil) == errSecSuccess, "the daemon keeps serving")
        }
    }
}
