import Foundation
import KeychainTestSupport
import Testing

/// The `security` executable end to end, in a temporary KEYCHAIN_HOME.
@Suite final class GenericPasswordCommandTests {
    let home: String
    init() throws { home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain" }
    deinit { DaemonControl.stop(home: home) }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": home])
    }

    @Test func storeAndReadBack() throws {
        let added = try security("add-generic-password", "-a", "alice", "-s", "example.com", "-w", "correct horse")
        #expect(added.status == 0)
        #expect(added.stdout.isEmpty && added.stderr.isEmpty)
        let found = try security("find-generic-password", "-a", "alice", "-s", "example.com", "-w")
        #expect(found.status == 0)
        #expect(found.stdout == "correct horse\n")
        #expect(found.stderr.isEmpty)
    }

    @Test func itemBlockAndPasswordOnStandardError() throws {
        _ = try security("add-generic-password", "-a", "bob", "-s", "svc", "-j", "a comment", "-c", "aapl", "-w", "pw")
        let found = try security("find-generic-password", "-s", "svc", "-g")
        #expect(found.status == 0)
        let lines = found.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "keychain: \"\(home)/keychain.db\"")
        #expect(lines[1] == "version: 512")
        #expect(lines[2] == "class: \"genp\"")
        #expect(lines[3] == "attributes:")
        #expect(lines[4] == "    0x00000007 <blob>=\"svc\"", "the label defaults to the service")
        #expect(lines.contains("    \"acct\"<blob>=\"bob\""))
        #expect(lines.contains("    \"icmt\"<blob>=\"a comment\""))
        #expect(lines.contains("    \"crtr\"<uint32>=\"aapl\""))
        #expect(lines.contains("    \"gena\"<blob>=<NULL>"))
        #expect(lines.contains { $0.hasPrefix("    \"cdat\"<timedate>=0x") && $0.hasSuffix("Z\\000\"") })
        #expect(found.stderr == "password: \"pw\"\n")
        #expect(!found.stdout.contains("pw\""), "the password is not on stdout with -g")
    }

    @Test func duplicatesAndUpdate() throws {
        _ = try security("add-generic-password", "-a", "a", "-s", "s", "-w", "one")
        let duplicate = try security("add-generic-password", "-a", "a", "-s", "s", "-w", "two")
        #expect(duplicate.status == 45)
        #expect(duplicate.stderr == "security: SecKeychainItemCreateFromContent (<default>): The specified item already exists in the keychain.\n")
        #expect(try security("add-generic-password", "-U", "-a", "a", "-s", "s", "-w", "two").status == 0)
        #expect(try security("find-generic-password", "-a", "a", "-s", "s", "-w").stdout == "two\n")
    }

    @Test func nonPrintablePasswordsPrintAsHex() throws {
        #expect(try security("add-generic-password", "-a", "bin", "-s", "s", "-X", "00ff41").status == 0)
        #expect(try security("find-generic-password", "-a", "bin", "-w").stdout == "00ff41\n")
        #expect(try security("find-generic-password", "-a", "bin", "-g").stderr == "password: 0x00FF41  \"\\000\\377A\"\n")
    }

    @Test func deleteAndNotFound() throws {
        _ = try security("add-generic-password", "-a", "gone", "-s", "s", "-w", "pw")
        let deleted = try security("delete-generic-password", "-a", "gone")
        #expect(deleted.status == 0)
        #expect(deleted.stdout.contains("\"acct\"<blob>=\"gone\""))
        #expect(deleted.stderr == "password has been deleted.\n")
        let missing = try security("find-generic-password", "-a", "gone")
        #expect(missing.status == 44)
        #expect(missing.stderr == "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n")
        #expect(try security("delete-generic-password", "-a", "gone").status == 44)
    }
}

extension GenericPasswordCommandTests {
    /// `dump-keychain -d -o FILE` writes what it would print, to a file only the user can
    /// read (it holds secrets) — an existing, readable file too.
    @Test func dumpToAFileIsPrivate() throws {
        _ = try security("add-generic-password", "-a", "alice", "-s", "svc", "-w", "pw")
        let printed = try security("dump-keychain", "-d")
        let file = home + "-dump.txt"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644]))
        let written = try security("dump-keychain", "-d", "-o", file)
        #expect(written.status == 0 && written.stdout.isEmpty)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == printed.stdout)
        #expect(printed.stdout.contains("data:\n\"pw\"\n"))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
