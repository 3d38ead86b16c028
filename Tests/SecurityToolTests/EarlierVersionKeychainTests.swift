import Foundation
import KeychainTestSupport
import Testing

/// Keychains written by earlier versions of Trousseau open with today's code, every item
/// readable, secret included (`Fixtures/keychains/vN`: written by `scripts/make-keychain-fixture`
/// with the code of the commit whose newest migration was schema vN; what each holds is in
/// its CONTENTS). Upgrades lose nothing: a fixture is never rewritten, and a new schema
/// version adds one.
@Suite struct EarlierVersionKeychainTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/keychains").path

    static var versions: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures)) ?? []).sorted()
    }

    @Test func everySchemaVersionHasAFixture() {
        #expect(Self.versions == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
    }

    /// One fixture copied into a fresh home, as its owner's home would be after an upgrade.
    struct Upgraded {
        let keychain: DaemonKeychain
        let contents: [[String]]

        init(_ version: String) throws {
            keychain = try DaemonKeychain()
            try FileManager.default.copyItem(atPath: EarlierVersionKeychainTests.fixtures + "/" + version, toPath: keychain.home)
            // The modes a keychain home has (git keeps none: a checkout's files are 0644, and
            // the enclave refuses a device key others can read).
            try Self.makePrivate(keychain.home)
            let searchList = keychain.home + "/search-list"
            if let list = try? String(contentsOfFile: searchList, encoding: .utf8) {
                try list.replacingOccurrences(of: "@KEYCHAIN_HOME@", with: keychain.home).write(toFile: searchList, atomically: true, encoding: .utf8)
            }
            contents = try String(contentsOfFile: keychain.home + "/CONTENTS", encoding: .utf8)
                .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        }

        static func makePrivate(_ directory: String) throws {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
            for entry in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let path = directory + "/" + entry
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    try makePrivate(path)
                } else {
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
                }
            }
        }

        func security(_ arguments: [String], input: String = "") throws -> CommandResult {
            try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home], input: input)
        }

        /// The lines of CONTENTS of one kind.
        func made(_ kind: String) -> [[String]] { contents.filter { $0.first == kind } }
    }

    @Test(arguments: versions) func itOpensAndEveryItemReadsWithItsSecret(version: String) throws {
        let upgraded = try Upgraded(version)
        var passwords = 0
        for line in upgraded.made("genp") + upgraded.made("inet") {
            // kind keychain account service secret…
            let (kind, keychain, account, service) = (line[0], line[1], line[2], line[3])
            let secret = line[4...].joined(separator: " ")
            var arguments = [kind == "genp" ? "find-generic-password" : "find-internet-password", "-a", account, "-s", service, "-w"]
            if keychain != "login" {
                let path = upgraded.keychain.home + "/keychains/" + keychain + "-db"
                let unlocked = try upgraded.security(["unlock-keychain", "-p", "fixture-password", path])
                #expect(unlocked.status == 0, "\(version): \(unlocked.stderr)")
                arguments.append(path)
            }
            let found = try upgraded.security(arguments)
            // As macOS's `security -w`: a secret that is not printable ASCII is printed in hex.
            let printed = secret.utf8.allSatisfy { (0x20..<0x7f).contains($0) } ? secret : secret.utf8.map { String(format: "%02x", $0) }.joined()
            #expect(found.status == 0 && found.stdout == printed + "\n", "\(version) \(line): \(found.stderr) \(upgraded.keychain.logText)")
            passwords += 1
        }
        #expect(passwords >= 3)
        // A synchronizable item (v5 on) is found only by a query that asks for one.
        for line in upgraded.made("genp-sync") {
            let found = try upgraded.security(["find-generic-password", "--synchronizable", "-a", line[2], "-s", line[3], "-w"])
            #expect(found.status == 0 && found.stdout == line[4...].joined(separator: " ") + "\n", "\(version) \(line): \(found.stderr)")
        }

        // Every password item of every keychain on the search list, secret included: no
        // more, no fewer than were written.
        let dump = try upgraded.security(["dump-keychain", "-d"])
        #expect(dump.status == 0, "\(version): \(dump.stderr)")
        #expect(dump.stdout.components(separatedBy: "\ndata:\n").count - 1 == passwords, "\(version): \(dump.stdout)")

        if !upgraded.made("identity").isEmpty {
            let identities = try upgraded.security(["find-identity"])
            #expect(identities.stdout.contains("\"Fixture Identity\""), "\(version): \(identities.stdout)")
            // Its private key decrypts: exported, and read back by OpenSSL.
            let p12 = upgraded.keychain.directory + "/exported.p12"
            let exported = try upgraded.security(["export", "-t", "identities", "-f", "pkcs12", "-P", "export-password", "-o", p12])
            #expect(exported.status == 0, "\(version): \(exported.stderr)")
            let read = try CommandRunner.run(executable: "/usr/bin/openssl", ["pkcs12", "-in", p12, "-passin", "pass:export-password", "-nodes"])
            #expect(read.status == 0 && read.stdout.contains("PRIVATE KEY") && read.stdout.contains("Fixture Identity"), "\(version): \(read.stderr)")
        }
        if !upgraded.made("developer-root").isEmpty {
            // Issuing signs with the developer root's private key, stored by that version.
            let issued = try upgraded.security(["create-developer-identity", "--team", "ABCDE12345", "--out", upgraded.keychain.directory + "/issued"])
            #expect(issued.status == 0, "\(version): \(issued.stderr)")
        }
    }

    @Test(arguments: versions) func itsBackupVerifiesAndRestores(version: String) throws {
        let upgraded = try Upgraded(version)
        guard let line = upgraded.made("backup").first else { return }
        let archive = upgraded.keychain.home + "/" + line[1]
        let inspected = try upgraded.security(["backup", "inspect", "--verify", archive], input: "backup-password\n")
        #expect(inspected.status == 0, "\(version): \(inspected.stderr)")

        // Restored on "another machine" (a fresh keychain), its passwords read there.
        let fresh = try DaemonKeychain()
        let restore = try CommandRunner.run("security", ["backup", "restore", archive], environment: ["KEYCHAIN_HOME": fresh.home], input: "backup-password\n")
        #expect(restore.status == 0, "\(version): \(restore.stderr)")
        for password in upgraded.made("genp") where password[1] == "login" {
            let found = try CommandRunner.run("security", ["find-generic-password", "-a", password[2], "-s", password[3], "-w"], environment: ["KEYCHAIN_HOME": fresh.home])
            #expect(found.status == 0 && !found.stdout.isEmpty, "\(version) \(password): \(found.stderr)")
        }
    }
}
