import Foundation
import KeychainClient
import KeychainCrypto
import KeychainModel
import KeychainProtocol
import KeychainTestSupport
import Testing

/// `security backup` against real daemons and enclaves: two keychain homes are two devices
/// (each has its own device key).
@Suite struct BackupTests {
    static let password = "correct backup password"
    static let passcode = "1234"
    /// The protection classes a backup carries, and the ThisDeviceOnly ones among them.
    static let backedUpClasses = ["ak", "ck", "dk", "aku", "cku", "dku"]
    static let thisDeviceOnly: Set = ["aku", "cku", "dku"]

    let device: DaemonKeychain
    let api: Keychain
    let directory: String

    init() throws {
        device = try DaemonKeychain()
        api = Keychain(paths: device.paths, daemonEnvironment: device.environment)
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    // MARK: - Helpers

    func security(_ keychain: DaemonKeychain, _ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run(
            "security", arguments, environment: keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new },
            input: input)
    }

    /// One item of every backed-up class, with attributes of every type (non-UTF-8 and
    /// empty values too), an internet password, a key, a certificate, a synchronizable
    /// item and a tombstone; and a WhenPasscodeSetThisDeviceOnly item (a passcode is set).
    func populate() throws {
        #expect(try security(device, "set-keychain-password", input: "\(Self.passcode)\n\(Self.passcode)\n").status == 0)
        for pdmn in Self.backedUpClasses + ["akpu"] {
            try api.add(genericPassword(account: "acct-\(pdmn)", service: "backup", [
                "pdmn": .string(pdmn), "v_Data": .utf8("secret-\(pdmn)"), "labl": .string("label é \(pdmn)"),
                "gena": .data(Data([0, 1, 0xfe, 0xff])), "icmt": .string(""), "crtr": .number(0x6162_6364), "invi": .bool(true),
            ]))
        }
        try api.add([
            "class": .string("inet"), "srvr": .string("example.com"), "acct": .string("web"), "ptcl": .string("htps"),
            "port": .number(8443), "path": .string("/login"), "v_Data": .utf8("web secret"),
        ])
        try api.add([
            "class": .string("keys"), "kcls": .string("1"), "type": .string("73"), "bsiz": .number(256),
            "atag": .string("com.example.key"), "v_Data": .data(Data((0..<32).map { UInt8($0) })),
        ])
        try api.add([
            "class": .string("cert"), "issr": .utf8("CA"), "slnr": .data(Data([7])), "ctyp": .number(3),
            "v_Data": .data(Data(repeating: 0x30, count: 40)),
        ])
        try api.add(genericPassword(account: "synced", service: "backup", ["sync": .bool(true), "v_Data": .utf8("synced secret")]))
        try api.add(genericPassword(account: "gone", service: "backup", ["sync": .bool(true), "v_Data": .utf8("gone")]))
        try api.delete(genericPassword(account: "gone", service: "backup", ["sync": .bool(true)]))
    }

    /// Every item this process sees — tombstones too — with attributes, data and
    /// persistent reference, keyed by class and account (or tag, or issuer).
    func dump(_ keychain: Keychain) throws -> [String: [String: KeychainValue]] {
        var items: [String: [String: KeychainValue]] = [:]
        for itemClass in ["genp", "inet", "keys", "cert"] {
            for tombstone in [false, true] {
                let query: [String: KeychainValue] = [
                    "class": .string(itemClass), "m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true),
                    "r_Data": .bool(!tombstone), "r_PersistentRef": .bool(true), "sync": .string("syna"), "tomb": .bool(tombstone),
                ]
                guard let found = try? keychain.copyMatching(query)?.array else { continue }
                for case .dictionary(let item) in found {
                    let name = item["acct"] ?? item["atag"] ?? item["issr"] ?? .string("?")
                    items["\(itemClass) \(name) \(tombstone)"] = item
                }
            }
        }
        return items
    }

    func createBackup(_ keychain: DaemonKeychain, _ path: String) throws -> CommandResult {
        try security(keychain, "backup", "create", "--out", path, input: "\(Self.password)\n\(Self.password)\n\(Self.passcode)\n")
    }

    /// A fresh database on the same device: the keybag and device key stay.
    func wipeDatabase(_ keychain: DaemonKeychain) {
        DaemonControl.stop(home: keychain.home)
        for suffix in ["", "-wal", "-shm"] { unlink(keychain.home + "/keychain.db" + suffix) }
    }

    // MARK: - Tests

    @Test func sameDeviceRoundTripIsLossless() throws {
        try populate()
        let before = try dump(api)
        #expect(before.count == Self.backedUpClasses.count + 1 + 3 + 1 + 1, "\(before.keys.sorted())")
        let archive = directory + "/device.trbk"
        let created = try createBackup(device, archive)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("backed up 11 items"), "\(created.stdout)")
        #expect(created.stdout.contains("left out 1 WhenPasscodeSetThisDeviceOnly items"), "\(created.stdout)")
        var info = stat()
        #expect(stat(archive, &info) == 0 && info.st_mode & 0o777 == 0o600)

        wipeDatabase(device)
        #expect(try dump(api).isEmpty)
        #expect(try security(device, "unlock-keychain", "-p", Self.passcode).status == 0)
        let restored = try security(device, "backup", "restore", archive, input: "\(Self.password)\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("restored 11 items"), "\(restored.stdout)")

        var expected = before
        expected["genp \(KeychainValue.string("acct-akpu")) false"] = nil
        let after = try dump(api)
        #expect(after.keys.sorted() == expected.keys.sorted())
        for (name, item) in expected {
            #expect(after[name] == item, "\(name) differs after the round trip")
        }

        // Restoring again changes nothing: every item here is as new.
        let again = try security(device, "backup", "restore", archive, input: "\(Self.password)\n")
        #expect(again.stdout.contains("restored 0 items, replaced 0 older ones, kept 11"), "\(again.stdout)")
        #expect(try dump(api) == after)
    }

    @Test func anotherDeviceGetsExactlyTheMigratableItems() throws {
        try populate()
        let before = try dump(api)
        let archive = directory + "/device.trbk"
        #expect(try createBackup(device, archive).status == 0)

        let other = try DaemonKeychain()
        let otherAPI = Keychain(paths: other.paths, daemonEnvironment: other.environment)
        let restored = try security(other, "backup", "restore", archive, input: "\(Self.password)\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("restored 8 items"), "\(restored.stdout)")
        #expect(restored.stdout.contains("not restored: 3 ThisDeviceOnly items made on another device"), "\(restored.stdout)")

        let migratable = before.filter { _, item in
            guard case .string(let pdmn)? = item["pdmn"] else { return false }
            return !Self.thisDeviceOnly.contains(pdmn) && pdmn != "akpu"
        }
        #expect(migratable.count == 8)
        let after = try dump(otherAPI)
        #expect(after.keys.sorted() == migratable.keys.sorted())
        for (name, item) in migratable {
            #expect(after[name] == item, "\(name) differs on the other device")
        }
    }

    @Test func theArchiveNeverHoldsWhenPasscodeSetItems() throws {
        try populate()
        let archivePath = directory + "/device.trbk"
        #expect(try createBackup(device, archivePath).status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: archivePath))
        for secret in ["acct-", "secret-", "backup", "example.com", "web secret"] {
            #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in plaintext in the archive")
        }

        // Decrypt everything the password opens: the migratable classes, attributes and secrets.
        let archive = try BackupArchive(decoding: data)
        let keys = try BackupPasswordKeys(password: SecretBytes(Self.password.utf8), kdf: archive.kdf)
        try BackupArchive.verify(data, key: keys.integrityKey)
        #expect(!archive.records.contains { $0.protection == .whenPasscodeSetThisDeviceOnly })
        #expect(archive.classKeys[.whenPasscodeSetThisDeviceOnly] == nil)
        var accounts: [String] = []
        var secrets: [String] = []
        for record in archive.records where !record.protection.isThisDeviceOnly {
            let (wrapping, wrapped) = try #require(archive.classKeys[record.protection])
            #expect(wrapping == .password)
            let classKey = try keys.wrappingKey.unwrap(
                wrapped, associatedData: BackupArchive.classKeyAssociatedData(archive: archive.uuid, protection: record.protection, wrapping: wrapping))
            let attributes = try MetadataBlob.open(
                record.metadata, key: classKey.metadataKey(), associatedData: record.associatedData(for: .metadata, archive: archive.uuid))
            if case .string(let account)? = attributes["acct"] { accounts.append(account) }
            let secret = try SecretBlob.open(record.secret, associatedData: record.associatedData(for: .secret, archive: archive.uuid)) {
                wrapped, associatedData, _ in try classKey.unwrap(wrapped, associatedData: associatedData)
            }
            if let secret { secrets.append(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) }
        }
        #expect(Set(accounts) == ["acct-ak", "acct-ck", "acct-dk", "web", "synced", "gone"])
        #expect(secrets.contains("secret-ak") && secrets.contains("web secret") && !secrets.contains("secret-akpu"))
        // The ThisDeviceOnly records are there, but their keys need this device.
        let deviceOnly = archive.records.filter { $0.protection.isThisDeviceOnly }
        #expect(Set(deviceOnly.map(\.protection.rawValue)) == Self.thisDeviceOnly)
        #expect(archive.classKeys.values.filter { $0.wrapping == .passwordAndDevice }.count == 3)
    }

    @Test func aFlippedByteAnywhereIsRefusedBeforeAnythingIsWritten() throws {
        try api.add(genericPassword(account: "one", service: "backup", ["v_Data": .utf8("1")]))
        try api.add(genericPassword(account: "two", service: "backup", ["v_Data": .utf8("2"), "pdmn": .string("dku")]))
        let archive = directory + "/device.trbk"
        #expect(try createBackup(device, archive).status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: archive))

        let target = try DaemonKeychain()
        let targetAPI = Keychain(paths: target.paths, daemonEnvironment: target.environment)
        try targetAPI.add(genericPassword(account: "already", service: "here", ["v_Data": .utf8("kept")]))
        let before = try dump(targetAPI)

        // Every byte of the header, then positions spread over the rest, and the MAC's last.
        var positions = Array(0..<min(120, data.count))
        positions += stride(from: 120, to: data.count, by: max(1, (data.count - 120) / 60))
        positions.append(data.count - 1)
        var script = ""
        for (index, position) in positions.enumerated() {
            var flipped = data
            flipped[position] ^= 0x20
            let path = directory + "/flipped-\(index).trbk"
            try flipped.write(to: URL(fileURLWithPath: path))
            script += "backup restore \(path)\n\(Self.password)\n"
        }
        let result = try security(target, "-i", input: script)
        let refusals = result.stderr.split(separator: "\n").filter { $0.hasPrefix("backup: returned") }
        #expect(refusals.count == positions.count, "\(result.stdout)\n\(result.stderr)")
        #expect(!result.stdout.contains("restored"), "\(result.stdout)")
        #expect(try dump(targetAPI) == before, "a tampered archive wrote something")

        // The untouched archive restores.
        #expect(try security(target, "backup", "restore", archive, input: "\(Self.password)\n").stdout.contains("restored 1 items"))
    }

    @Test func aWrongPasswordChangesNothing() throws {
        try api.add(genericPassword(account: "one", service: "backup", ["v_Data": .utf8("1")]))
        let archive = directory + "/device.trbk"
        #expect(try createBackup(device, archive).status == 0)
        let target = try DaemonKeychain()
        let targetAPI = Keychain(paths: target.paths, daemonEnvironment: target.environment)
        let wrong = try security(target, "backup", "restore", archive, input: "not the password\n")
        #expect(wrong.status == 51, "errSecAuthFailed's low byte: \(wrong.stderr)")
        #expect(wrong.stderr == "security: backup restore: The user name or passphrase you entered is not correct.\n")
        #expect(try dump(targetAPI).isEmpty)
        let inspect = try security(target, "backup", "inspect", "--verify", archive, input: "not the password\n")
        #expect(inspect.status == 51)
    }

    @Test func newerModificationWinsAndATieKeepsWhatIsHere() throws {
        let target = try DaemonKeychain()
        let targetAPI = Keychain(paths: target.paths, daemonEnvironment: target.environment)
        // Older on the target, newer in the backup: replaced.
        try targetAPI.add(genericPassword(account: "x", service: "conflict", ["v_Data": .utf8("target, older")]))
        // Newer on the target: kept.
        try api.add(genericPassword(account: "y", service: "conflict", ["v_Data": .utf8("backup, older")]))
        Thread.sleep(forTimeInterval: 1.1)
        try api.add(genericPassword(account: "x", service: "conflict", ["v_Data": .utf8("backup, newer")]))
        try targetAPI.add(genericPassword(account: "y", service: "conflict", ["v_Data": .utf8("target, newer")]))

        let archive = directory + "/device.trbk"
        #expect(try createBackup(device, archive).status == 0)
        let restored = try security(target, "backup", "restore", archive, input: "\(Self.password)\n")
        #expect(restored.stdout.contains("restored 0 items, replaced 1 older ones, kept 1 as new or newer"), "\(restored.stdout)")
        func secret(_ account: String) throws -> Data? {
            try targetAPI.copyMatching(genericPassword(account: account, service: "conflict", ["r_Data": .bool(true)]))?.dataValue
        }
        #expect(try secret("x") == Data("backup, newer".utf8))
        #expect(try secret("y") == Data("target, newer".utf8))
    }

    @Test func inspectCountsWithoutThePasswordAndVerifiesWithIt() throws {
        try api.add(genericPassword(account: "one", service: "backup", ["v_Data": .utf8("1")]))
        try api.add(genericPassword(account: "two", service: "backup", ["v_Data": .utf8("2"), "pdmn": .string("cku")]))
        try api.add(["class": .string("inet"), "srvr": .string("example.com"), "acct": .string("web"), "v_Data": .utf8("w")])
        let archive = directory + "/device.trbk"
        #expect(try createBackup(device, archive).status == 0)
        let group = try #require(try api.copyMatching(genericPassword(account: "one", ["r_Attributes": .bool(true)]))?.dictionary?["agrp"])
        guard case .string(let groupName) = group else { Issue.record("no group"); return }

        let inspected = try security(device, "backup", "inspect", archive)
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdout.contains("items: 3 (tombstones: 0)"))
        #expect(inspected.stdout.contains("    genp \(groupName)  2\n"), "\(inspected.stdout)")
        #expect(inspected.stdout.contains("    inet \(groupName)  1\n"), "\(inspected.stdout)")
        #expect(inspected.stdout.contains("    ak  2\n    cku  1 (this device only)\n"), "\(inspected.stdout)")
        #expect(inspected.stdout.hasSuffix("integrity: not verified (--verify checks it with the password)\n"))
        let verified = try security(device, "backup", "inspect", "--verify", archive, input: "\(Self.password)\n")
        #expect(verified.stdout.hasSuffix("integrity: verified\n"), "\(verified.stderr)")

        var data = try Data(contentsOf: URL(fileURLWithPath: archive))
        data[data.count - 40] ^= 1
        try data.write(to: URL(fileURLWithPath: archive))
        #expect(try security(device, "backup", "inspect", "--verify", archive, input: "\(Self.password)\n").status == 51)
    }

    @Test func applicationsCannotMakeOrRestoreBackups() throws {
        let client = try device.connect()  // this test process: an unsigned application
        #expect(osStatus { try client.call(Service.CreateBackup(path: directory + "/x", password: SecretBytes("p".utf8))) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try client.call(Service.RestoreBackup(path: directory + "/x", password: SecretBytes("p".utf8))) } == OSStatusCode.missingEntitlement)
        #expect(!FileManager.default.fileExists(atPath: directory + "/x"))
    }

    @Test func withAPasscodeABackupNeedsIt() throws {
        #expect(try security(device, "set-keychain-password", input: "\(Self.passcode)\n\(Self.passcode)\n").status == 0)
        let archive = directory + "/device.trbk"
        let refused = try security(device, "backup", "create", "--out", archive, input: "\(Self.password)\n\(Self.password)\nwrong\n")
        #expect(refused.status != 0)
        #expect(!FileManager.default.fileExists(atPath: archive))
        #expect(try createBackup(device, archive).status == 0)
    }
}
