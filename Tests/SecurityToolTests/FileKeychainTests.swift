import Foundation
import KeychainTestSupport
import Testing

/// File keychains through `security` against real daemons: a keychain file is portable (its
/// password and nothing else opens it on another "machine", another KEYCHAIN_HOME with its
/// own device key), bad files are refused and left untouched, a wrong password is
/// throttled per keychain, and of two processes creating one keychain, one wins.
@Suite final class FileKeychainTests {
    let machineA: DaemonKeychain
    let machineB: DaemonKeychain

    init() throws {
        machineA = try DaemonKeychain()
        machineB = try DaemonKeychain()
    }

    func security(_ machine: DaemonKeychain, _ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": machine.home])
    }

    @Test func aCopiedKeychainOpensWithItsPasswordAndNothingElse() throws {
        let file = machineA.directory + "/travel.keychain-db"
        #expect(try security(machineA, "create-keychain", "-p", "correct horse", file).status == 0)
        for index in 0..<20 {
            let added = try security(machineA, "add-generic-password", "-a", "user\(index)", "-s", "svc", "-w", "secret-\(index)", file)
            #expect(added.status == 0, "\(added.stderr)")
        }
        #expect(try security(machineA, "add-internet-password", "-a", "me", "-s", "example.com", "-w", "web", file).status == 0)
        // Nothing of it went into the login keychain.
        #expect(try security(machineA, "find-generic-password", "-a", "user3", "login.keychain").status == 44)

        // The file alone, while machine A's daemon still runs (its writes are in the file).
        let wal = (try? FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "every write is checkpointed into the file")
        let copy = machineB.directory + "/arrived.keychain"
        try FileManager.default.copyItem(atPath: file, toPath: copy)

        let locked = try security(machineB, "find-generic-password", "-a", "user3", "-w", copy)
        #expect(locked.status == 36, "a keychain arrives locked: \(locked.stderr)")
        let wrong = try security(machineB, "unlock-keychain", "-p", "wrong horse", copy)
        #expect(wrong.status == 51)
        #expect(try security(machineB, "find-generic-password", "-a", "user3", "-w", copy).status == 36, "a wrong password opens nothing")

        #expect(try security(machineB, "unlock-keychain", "-p", "correct horse", copy).status == 0)
        for index in 0..<20 {
            let found = try security(machineB, "find-generic-password", "-a", "user\(index)", "-s", "svc", "-w", copy)
            #expect(found.status == 0 && found.stdout == "secret-\(index)\n", "\(found.stderr)")
        }
        #expect(try security(machineB, "find-internet-password", "-s", "example.com", "-w", copy).stdout == "web\n")

        // The secrets are not in the file in the clear.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        #expect(bytes.range(of: Data("secret-7".utf8)) == nil)
        #expect(bytes.range(of: Data("user7".utf8)) == nil)
    }

    @Test func filesThatAreNotKeychainsAreRefusedAndLeftAlone() throws {
        let directory = machineA.directory
        let text = directory + "/notes.keychain"
        try Data("just some notes\n".utf8).write(to: URL(fileURLWithPath: text))
        let good = directory + "/good.keychain-db"
        #expect(try security(machineA, "create-keychain", "-p", "pw", good).status == 0)
        let goodBytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let truncated = directory + "/truncated.keychain-db"
        try goodBytes.prefix(goodBytes.count / 3).write(to: URL(fileURLWithPath: truncated))
        let plainSQLite = directory + "/plain.keychain-db"
        #expect(try CommandRunner.run(executable: "/usr/bin/env", ["python3", "-c", "import sqlite3; sqlite3.connect('\(plainSQLite)').execute('create table t(x)')"]).status == 0)
        // A header of a newer format: the version byte after "TRKC".
        let newer = directory + "/newer.keychain-db"
        try FileManager.default.copyItem(atPath: good, toPath: newer)
        #expect(try CommandRunner.run(executable: "/usr/bin/env", ["python3", "-c", """
            import sqlite3
            db = sqlite3.connect('\(newer)')
            header = bytearray(db.execute('select header from trousseau_keychain').fetchone()[0])
            header[4] = 9
            db.execute('update trousseau_keychain set header = ?', (bytes(header),))
            db.commit()
            """]).status == 0)
        // A header whose scrypt memory overflows an Int (what the fuzzer found: securityd trapped on it).
        let crafted = directory + "/crafted.keychain-db"
        try FileManager.default.copyItem(atPath: good, toPath: crafted)
        #expect(try CommandRunner.run(executable: "/usr/bin/env", ["python3", "-c", """
            import sqlite3
            db = sqlite3.connect('\(crafted)')
            header = bytearray(db.execute('select header from trousseau_keychain').fetchone()[0])
            header[21:26] = bytes([32, 0x0a, 0, 0, 8])
            db.execute('update trousseau_keychain set header = ?', (bytes(header),))
            db.commit()
            """]).status == 0)

        for (file, why) in [
            (text, "not a keychain"), (truncated, "truncated"), (plainSQLite, "another SQLite file"), (newer, "a newer format"),
            (crafted, "parameters out of range"),
        ] {
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            let unlocked = try security(machineA, "unlock-keychain", "-p", "pw", file)
            #expect(unlocked.status == 49, "\(why): \(unlocked.stderr)")  // errSecInvalidKeychain -25295
            #expect(unlocked.stderr.hasSuffix("The specified keychain is not a valid keychain file.\n"), "\(why)")
            #expect(try security(machineA, "delete-keychain", file).status == 49, "\(why): only keychains are deleted")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "\(why): the file is untouched")
        }
        let detail = try CommandRunner.run("security", ["unlock-keychain", "-p", "pw", newer], environment: ["KEYCHAIN_HOME": machineA.home, "TROUSSEAU_DEBUG": "1"])
        #expect(detail.stderr.contains("newer Trousseau"), "\(detail.stderr)")
        // The daemon serves on: the good keychain still works.
        #expect(try security(machineA, "unlock-keychain", "-p", "pw", good).status == 0)
        #expect(try security(machineA, "add-generic-password", "-a", "a", "-s", "s", "-w", "x", good).status == 0)
    }

    @Test func wrongPasswordsAreThrottledPerKeychain() throws {
        let first = machineA.directory + "/first.keychain-db", second = machineA.directory + "/second.keychain-db"
        #expect(try security(machineA, "create-keychain", "-p", "one", first, second).status == 0)
        for _ in 0..<5 { #expect(try security(machineA, "unlock-keychain", "-p", "guess", first).status == 51) }
        let throttled = try CommandRunner.run(
            "security", ["unlock-keychain", "-p", "one", first], environment: ["KEYCHAIN_HOME": machineA.home, "TROUSSEAU_DEBUG": "1"])
        #expect(throttled.status == 51 && throttled.stderr.contains("too many failed attempts"), "\(throttled.stderr)")
        #expect(try security(machineA, "unlock-keychain", "-p", "one", second).status == 0, "another keychain's count is its own")
    }

    @Test func ofTwoCreatingOneKeychainOneWins() throws {
        let file = machineA.directory + "/race.keychain-db"
        _ = try machineA.connect()
        let results = try (0..<6).map { _ in
            let process = Process()
            process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("security")
            process.arguments = ["create-keychain", "-p", "pw", file]
            process.environment = ProcessInfo.processInfo.environment.merging(CommandRunner.testEnvironment) { _, new in new }
                .merging(["KEYCHAIN_HOME": machineA.home]) { _, new in new }
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }.map { process in
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(results.filter { $0 == 0 }.count == 1, "\(results)")
        #expect(results.filter { $0 == 48 }.count == 5, "errSecDuplicateKeychain (-25296) for the others: \(results)")
        #expect(try security(machineA, "unlock-keychain", "-p", "pw", file).status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: machineA.directory).filter { $0.contains(".creating-") }
        #expect(leftovers.isEmpty)
    }

    @Test func changingThePasswordKeepsTheItems() throws {
        let file = machineA.directory + "/moving.keychain-db"
        #expect(try security(machineA, "create-keychain", "-p", "old", file).status == 0)
        #expect(try security(machineA, "add-generic-password", "-a", "a", "-s", "s", "-w", "kept", file).status == 0)
        #expect(try security(machineA, "set-keychain-password", "-o", "wrong", "-p", "new", file).status == 51)
        #expect(try security(machineA, "set-keychain-password", "-o", "old", "-p", "new", file).status == 0)
        #expect(try security(machineA, "lock-keychain", file).status == 0)
        #expect(try security(machineA, "unlock-keychain", "-p", "old", file).status == 51)
        #expect(try security(machineA, "unlock-keychain", "-p", "new", file).status == 0)
        #expect(try security(machineA, "find-generic-password", "-a", "a", "-w", file).stdout == "kept\n")
        // On another machine, too: the new password is in the file.
        let copy = machineB.directory + "/moving.keychain-db"
        try FileManager.default.copyItem(atPath: file, toPath: copy)
        #expect(try security(machineB, "unlock-keychain", "-p", "new", copy).status == 0)
        #expect(try security(machineB, "find-generic-password", "-a", "a", "-w", copy).stdout == "kept\n")
    }
}
