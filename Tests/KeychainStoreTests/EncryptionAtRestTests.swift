import FoundationEssentials
import GRDB
import Glibc
import KeychainModel
import KeychainStore
import EnclaveBackend
import KeychainTestSupport
import Testing

@Suite struct EncryptionAtRestTests {
    @Test func noAccountServiceLabelCommentOrSecretInTheDatabaseFiles() throws {
        let keychain = try TemporaryKeychain()
        let needles = [
            "acct-9f3c1e-zebra", "svce-77ab21-okapi", "labl-5d0e44-tapir", "icmt-c1a9f0-quokka", "secret-e2b7d9-narwhal",
            "desc-a1b2c3-ibis", "gena-0f9e8d-lemur", "srvr-31415.example.org",
        ]
        for i in 0..<40 {
            _ = try keychain.store.add(
                genericPassword(account: "\(needles[0])-\(i)", service: needles[1], [
                    "labl": .string(needles[2]), "icmt": .string(needles[3]), "v_Data": .utf8(needles[4]),
                    "desc": .string(needles[5]), "gena": .utf8(needles[6]),
                ]),
                caller: keychain.caller)
            _ = try keychain.store.add(
                ["class": .string("inet"), "acct": .string("\(needles[0])-\(i)"), "srvr": .string(needles[7]),
                 "v_Data": .utf8(needles[4])],
                caller: keychain.caller)
        }
        try keychain.store.update(genericPassword(account: "\(needles[0])-1"), attributes: ["labl": .string(needles[2] + "-updated")], caller: keychain.caller)
        try keychain.store.delete(genericPassword(account: "\(needles[0])-2"), caller: keychain.caller)

        var scanned: [String: Int] = [:]
        for path in keychain.databaseFiles {
            guard let contents = try? Data(contentsOf: URL(fileURLWithPath: path)) else { continue }
            scanned[path] = contents.count
            for needle in needles {
                // Every needle is at least 14 characters; a 10-character piece is distinctive enough.
                #expect(contents.range(of: Data(needle.prefix(10).utf8)) == nil, "\(needle) found in \(path)")
            }
        }
        #expect(scanned[keychain.databaseFiles[0], default: 0] > 0, "the database was scanned")
        #expect(scanned[keychain.databaseFiles[1], default: 0] > 0, "the WAL was scanned while it held the writes")
        #expect(scanned[keychain.databaseFiles[2]] != nil, "the shm file was scanned")
    }

    @Test func databaseFilesArePrivate() throws {
        let keychain = try TemporaryKeychain()
        _ = try keychain.store.add(genericPassword(account: "a"), caller: keychain.caller)
        for path in keychain.databaseFiles + [keychain.home + "/device.key"] {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            #expect(info.st_mode & 0o077 == 0, "\(path) must not be readable by others")
        }
    }

    @Test func itemsSurviveReopening() throws {
        let keychain = try TemporaryKeychain()
        _ = try keychain.store.add(genericPassword(account: "persist", ["v_Data": .utf8("kept")]), caller: keychain.caller)
        let reopened = try KeychainStore(directory: keychain.home, keybag: SoftwareKeybag(directory: keychain.home, deviceKey: FileDeviceKey(directory: keychain.home)))
        #expect(try reopened.copyMatching(genericPassword(account: "persist", ["r_Data": .bool(true)]), caller: keychain.caller) == .utf8("kept"))
    }
}
