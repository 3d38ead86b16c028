import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// securityd's log as `journalctl -p warning` reads it: when standard error is the journal's
/// stream (`JOURNAL_STREAM` names its device and inode, as systemd sets it for a unit), each
/// line starts with its syslog priority; a refused request is a warning (`<4>`), starting a
/// notice (`<5>`). Without systemd here, the test gives the daemon a log file and names that
/// file's device and inode, which is what systemd's stream is to the daemon.
@Suite final class DaemonLogTests {
    let directory: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit {
        try? FileManagerLite.removeTree(directory)
    }

    /// A daemon whose log is `file`, with `JOURNAL_STREAM` set to `journalStream(file)` or to
    /// `otherStream`; a wrong keychain password is refused there. Returns the log.
    func logOfARefusal(_ name: String, journal: Bool) throws -> String {
        let log = directory + "/\(name).log"
        try #require(FileManager.default.createFile(atPath: log, contents: nil))
        var info = stat()
        try #require(stat(log, &info) == 0)
        // Another file's device and inode: the variable is set but names another stream
        // (standard error redirected to a file under a unit): plain lines.
        let stream = journal ? "\(info.st_dev):\(info.st_ino)" : "\(info.st_dev):\(info.st_ino + 1)"
        // A client passes a daemon it starts no JOURNAL_STREAM (its own standard error is not
        // the daemon's): a wrapper sets it, as systemd's unit would.
        let keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_SECURITYD_LOG": log])
        let wrapper = directory + "/securityd-\(name)"
        try CommandRunner.writeExecutable(
            Data("#!/bin/sh\nJOURNAL_STREAM='\(stream)' exec '\(DaemonKeychain.daemonExecutable)' \"$@\"\n".utf8), to: wrapper)
        keychain.daemon = wrapper
        _ = try keychain.connect()
        func security(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
        }
        try #require(try security("set-keychain-password", "-p", "right-password").status == 0)
        try #require(try security("lock-keychain").status == 0)
        #expect(try security("unlock-keychain", "-p", "wrong-guess-4711").status != 0)
        // The line is written before the answer; read it after a request that follows.
        _ = try security("show-keychain-info")
        return try String(contentsOfFile: log, encoding: .utf8)
    }

    @Test func aRefusalIsAWarningInTheJournalAndAPlainLineElsewhere() throws {
        let journal = try logOfARefusal("journal", journal: true)
        let lines = journal.split(separator: "\n")
        let refusal = lines.first { $0.hasPrefix("<4>refused ") }
        #expect(refusal?.contains("OSStatus -25293") == true && refusal?.contains("/security") == true, "\(journal)")
        #expect(lines.contains { $0.hasPrefix("<5>starting for ") } && lines.contains { $0.hasPrefix("<5>serving ") }, "\(journal)")
        #expect(lines.allSatisfy { $0.first == "<" }, "every line has its priority: \(journal)")
        #expect(!journal.contains("wrong-guess-4711") && !journal.contains("right-password"))

        let plain = try logOfARefusal("plain", journal: false)
        let plainLines = plain.split(separator: "\n")
        #expect(plainLines.contains { $0.hasPrefix("securityd[") && $0.contains("]: refused ") && $0.contains("OSStatus -25293") }, "\(plain)")
        #expect(!plainLines.contains { $0.first == "<" }, "\(plain)")
        #expect(!plain.contains("wrong-guess-4711") && !plain.contains("right-password"))
    }
}
