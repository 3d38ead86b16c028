import Foundation
import KeychainTestSupport
import Security
import Testing

/// macOS's SecKeychain functions and the SecItem keys that name keychains, as macOS code
/// calls them: create, open, unlock, lock and delete a keychain file, keep the search list
/// and the default, add into a keychain with `kSecUseKeychain`, search keychains with
/// `kSecMatchSearchList`, and import a PKCS#12 file into one with `kSecImportExportKeychain`.
/// Without those keys SecItem keeps its iOS semantics: the login keychain only.
extension SecurityAPI {
    @Suite final class SecKeychainTests {
        let keychain: DaemonKeychain
        let service = "com.example.keychains." + UUID().uuidString

        init() throws {
            keychain = try DaemonKeychain()
            SecurityAPI.use(keychain)
        }

        deinit { _ = SecurityAPI.useSharedKeychain() }

        func create(_ path: String, password: String) -> (OSStatus, SecKeychain?) {
            var created: SecKeychain?
            let status = SecKeychainCreate(path, UInt32(password.utf8.count), password, false, nil, &created)
            return (status, created)
        }

        func path(_ keychain: SecKeychain?) -> String? {
            var buffer = [CChar](repeating: 0, count: 1024)
            var length = UInt32(buffer.count)
            guard SecKeychainGetPath(keychain, &length, &buffer) == errSecSuccess else { return nil }
            return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        func searchList() -> [String] {
            var list: CFArray?
            guard SecKeychainCopySearchList(&list) == errSecSuccess, let keychains = list as? [SecKeychain] else { return [] }
            return keychains.compactMap(path)
        }

        func password(account: String, _ extra: [String: Any] = [:]) -> (OSStatus, String?) {
            var result: CFTypeRef?
            let query = SecurityAPI.genericPassword(service: service, account: account, [kSecReturnData as String: true].merging(extra) { $1 })
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
        }

        @Test func aKeychainFileLivesThroughCreateUnlockLockAndDelete() throws {
            let file = keychain.directory + "/work.keychain-db"
            let (status, created) = create(file, password: "pa55word")
            #expect(status == errSecSuccess)
            let work = try #require(created)
            #expect(CFGetTypeID(work) == SecKeychainGetTypeID())
            #expect(path(work) == file)
            #expect(create(file, password: "other").0 == errSecDuplicateKeychain)

            // kSecUseKeychain adds there; without it, SecItem is the login keychain's.
            let add = SecurityAPI.genericPassword(service: service, account: "build", [kSecValueData as String: Data("in-file".utf8), kSecUseKeychain as String: work])
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(password(account: "build").0 == errSecItemNotFound, "the login keychain does not have it")
            #expect(password(account: "build", [kSecMatchSearchList as String: [work]]) == (errSecSuccess, "in-file"))

            // Opened by name, it is the same keychain.
            var opened: SecKeychain?
            #expect(SecKeychainOpen("work.keychain", &opened) == errSecSuccess)
            #expect(path(opened) == keychain.home + "/keychains/work.keychain-db", "a bare name is in the keychain directory")
            #expect(SecKeychainOpen(file, &opened) == errSecSuccess)
            #expect(opened == work)

            #expect(SecKeychainLock(work) == errSecSuccess)
            #expect(password(account: "build", [kSecMatchSearchList as String: [work]]).0 == errSecInteractionNotAllowed)
            #expect(SecKeychainUnlock(work, 5, "wrong", true) == errSecAuthFailed)
            #expect(SecKeychainUnlock(work, 0, nil, false) == errSecInteractionNotAllowed, "nobody to ask")
            #expect(SecKeychainUnlock(work, 8, "pa55word", true) == errSecSuccess)
            #expect(password(account: "build", [kSecMatchSearchList as String: [work]]) == (errSecSuccess, "in-file"))

            // SecItemUpdate and SecItemDelete reach it through the search list too.
            let scoped = SecurityAPI.genericPassword(service: service, account: "build", [kSecMatchSearchList as String: [work]])
            #expect(SecItemUpdate(scoped as CFDictionary, [kSecValueData as String: Data("changed".utf8)] as CFDictionary) == errSecSuccess)
            #expect(password(account: "build", [kSecMatchSearchList as String: [work]]) == (errSecSuccess, "changed"))
            #expect(SecItemDelete(scoped as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(scoped as CFDictionary) == errSecItemNotFound)

            #expect(SecKeychainDelete(work) == errSecSuccess)
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(SecKeychainDelete(work) == errSecNoSuchKeychain)
            #expect(password(account: "build", [kSecMatchSearchList as String: [work]]).0 == errSecNoSuchKeychain)
        }

        /// The System keychain by macOS's path: its own securityd (one of the test's, run by
        /// this user, who is therefore its owner), reached by kSecUseKeychain and
        /// kSecMatchSearchList, alone or beside the login keychain.
        @Test func theSystemKeychainByItsPath() throws {
            let daemon = try SystemKeychainDaemon(directory: keychain.directory)
            defer { daemon.stop() }
            SecurityAPI.use(keychain, systemSocket: daemon.socket)
            var opened: SecKeychain?
            #expect(SecKeychainOpen("/Library/Keychains/System.keychain", &opened) == errSecSuccess)
            let system = try #require(opened)
            #expect(path(system) == "/Library/Keychains/System.keychain")

            let add = SecurityAPI.genericPassword(service: service, account: "machine", [kSecValueData as String: Data("802.1X".utf8), kSecUseKeychain as String: system])
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(password(account: "machine").0 == errSecItemNotFound, "not in the login keychain")
            #expect(password(account: "machine", [kSecMatchSearchList as String: [system]]) == (errSecSuccess, "802.1X"))

            // Beside the login keychain: each keychain's match, in the order of the list.
            let login = SecurityAPI.genericPassword(service: service, account: "user", [kSecValueData as String: Data("mine".utf8)])
            #expect(SecItemAdd(login as CFDictionary, nil) == errSecSuccess)
            var loginKeychain: SecKeychain?
            #expect(SecKeychainOpen("login.keychain", &loginKeychain) == errSecSuccess)
            let both: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnAttributes as String: true, kSecMatchSearchList as String: [system, try #require(loginKeychain)],
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(both as CFDictionary, &result) == errSecSuccess)
            #expect(((result as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String } == ["machine", "user"])

            let scoped = SecurityAPI.genericPassword(service: service, account: "machine", [kSecMatchSearchList as String: [system]])
            #expect(SecItemUpdate(scoped as CFDictionary, [kSecValueData as String: Data("rotated".utf8)] as CFDictionary) == errSecSuccess)
            #expect(password(account: "machine", [kSecMatchSearchList as String: [system]]) == (errSecSuccess, "rotated"))
            #expect(SecItemDelete(scoped as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(scoped as CFDictionary) == errSecItemNotFound)
            #expect(password(account: "user") == (errSecSuccess, "mine"), "the login keychain's item is untouched")

            // Without its daemon, the System keychain is not available; nothing starts one.
            daemon.stop()
            #expect(password(account: "machine", [kSecMatchSearchList as String: [system]]).0 == errSecNotAvailable)
        }

        /// A configuration profile's items are the system's, as on iOS: an application neither
        /// sees nor deletes them, nor adds into their group; the tool reads them.
        @Test func aProfilesItemsAreBeyondApplications() throws {
            let profile = keychain.directory + "/lobby.mobileconfig"
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict>
                <key>PayloadType</key><string>Configuration</string><key>PayloadVersion</key><integer>1</integer>
                <key>PayloadIdentifier</key><string>com.example.lobby</string><key>PayloadUUID</key><string>L-1</string>
                <key>PayloadContent</key><array><dict>
                <key>PayloadType</key><string>com.apple.wifi.managed</string><key>PayloadVersion</key><integer>1</integer>
                <key>PayloadIdentifier</key><string>com.example.lobby.wifi</string><key>PayloadUUID</key><string>L-2</string>
                <key>SSID_STR</key><string>Lobby</string><key>Password</key><string>lobby-pass</string>
                </dict></array></dict></plist>
                """.utf8
            ).write(to: URL(fileURLWithPath: profile))
            func security(_ arguments: String...) throws -> CommandResult {
                try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
            }
            let installed = try security("profiles", "install", profile)
            #expect(installed.status == 0, "\(installed.stderr)")

            let wifi = SecurityAPI.genericPassword(service: "AirPort", account: "Lobby")
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(wifi as CFDictionary, &result) == errSecItemNotFound)
            #expect(SecItemDelete(wifi as CFDictionary) == errSecItemNotFound)
            let intoTheGroup = SecurityAPI.genericPassword(
                service: service, account: "mine", [kSecAttrAccessGroup as String: "trousseau.profile.com.example.lobby", kSecValueData as String: Data("x".utf8)])
            #expect(SecItemAdd(intoTheGroup as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Lobby", "-w").stdout == "lobby-pass\n")
        }

        @Test func theSearchListAndTheDefault() throws {
            let login = keychain.home + "/keychain.db"
            #expect(searchList() == [login])
            var defaultKeychain: SecKeychain?
            #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
            #expect(path(defaultKeychain) == login)

            let one = try #require(create(keychain.directory + "/one.keychain-db", password: "1").1)
            let two = try #require(create(keychain.directory + "/two.keychain-db", password: "2").1)
            #expect(searchList() == [login, keychain.directory + "/one.keychain-db", keychain.directory + "/two.keychain-db"], "creating joins the list")
            #expect(SecKeychainSetSearchList([two, one] as CFArray) == errSecSuccess)
            #expect(searchList() == [keychain.directory + "/two.keychain-db", keychain.directory + "/one.keychain-db"])
            #expect(SecKeychainSetDefault(two) == errSecSuccess)
            #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
            #expect(defaultKeychain == two)

            // kSecMatchSearchList over both, in order: the first for one match, both for all.
            for (target, value) in [(one, "from one"), (two, "from two")] {
                let add = SecurityAPI.genericPassword(service: service, account: "shared", [kSecValueData as String: Data(value.utf8), kSecUseKeychain as String: target])
                #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
            #expect(password(account: "shared", [kSecMatchSearchList as String: [two, one]]) == (errSecSuccess, "from two"))
            var all: CFTypeRef?
            let query = SecurityAPI.genericPassword(service: service, account: "shared", [
                kSecMatchSearchList as String: [one, two], kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true,
            ])
            #expect(SecItemCopyMatching(query as CFDictionary, &all) == errSecSuccess)
            #expect((all as? [Data])?.map { String(decoding: $0, as: UTF8.self) } == ["from one", "from two"])

            // Deleting a keychain takes it off the list, and the login keychain is the default again.
            #expect(SecKeychainDelete(two) == errSecSuccess)
            #expect(searchList() == [keychain.directory + "/one.keychain-db"])
            #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
            #expect(path(defaultKeychain) == login)
            #expect(SecKeychainDelete(one) == errSecSuccess)
        }

        @Test func getPathSaysWhenTheBufferIsTooSmall() throws {
            var opened: SecKeychain?
            #expect(SecKeychainOpen("/tmp/some.keychain", &opened) == errSecSuccess)
            var small = [CChar](repeating: 0, count: 8)
            var length = UInt32(small.count)
            #expect(SecKeychainGetPath(opened, &length, &small) == errSecBufferTooSmall)
            var login: SecKeychain?
            #expect(SecKeychainOpen("login.keychain", &login) == errSecSuccess)
            #expect(path(login) == keychain.home + "/keychain.db")
        }

        @Test func pkcs12ImportsIntoTheKeychainNamed() throws {
            let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("SecurityToolTests/Golden/fixtures/signing.p12")
            let target = try #require(create(keychain.directory + "/signing.keychain-db", password: "kc").1)
            var items: CFArray?
            let options: [String: Any] = [kSecImportExportPassphrase as String: "golden", kSecImportExportKeychain as String: target]
            #expect(SecPKCS12Import(try Data(contentsOf: fixtures) as CFData, options as CFDictionary, &items) == errSecSuccess)
            #expect((items as? [[String: Any]])?.count == 1)

            var found: CFTypeRef?
            let identities: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
            #expect(SecItemCopyMatching(identities as CFDictionary, &found) == errSecItemNotFound, "not in the login keychain")
            var inFile = identities
            inFile[kSecMatchSearchList as String] = [target]
            #expect(SecItemCopyMatching(inFile as CFDictionary, &found) == errSecSuccess)
            let identity = try #require((found as? [SecIdentity])?.first)
            var key: SecKey?
            #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
            #expect(key != nil)
            #expect(SecKeychainDelete(target) == errSecSuccess)
        }
    }
}
