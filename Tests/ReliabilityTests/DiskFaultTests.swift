import Foundation
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

/// Running out of space and a read-only home: clear errors, nothing stored is lost, and
/// the keychain works again once the fault is gone.
@Suite struct DiskFaultTests {
    /// Items added before the fault, to be found intact after it.
    static func fill(_ client: KeychainClient, _ range: Range<Int>) throws {
        for i in range {
            _ = try client.add(genericPassword(account: "before-\(i)", ["v_Data": .utf8("secret \(i)")]))
        }
    }

    static func readAll(_ client: KeychainClient) throws -> [String: KeychainValue] {
        let items = try client.copyMatching(
            genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true), "r_Data": .bool(true)]))?
            .array?.compactMap(\.dictionary) ?? []
        return Dictionary(items.map { ($0["acct"]?.stringValue ?? "?", $0["v_Data"] ?? .bool(false)) }) { first, _ in first }
    }

    /// The daemon runs under a file-size limit (RLIMIT_FSZ) just above its database: adds
    /// fail with errSecDiskFull once a file would grow past it, the daemon keeps serving
    /// reads, and when the limit is raised (space returns) adds work again.
    @Test func aFileSizeLimitGivesDiskFullAndRecovers() throws {
        let keychain = try DaemonKeychain()
        try Self.fill(keychain.connect(), 0..<20)
        DaemonControl.stop(home: keychain.home)  // the WAL is checkpointed into the database

        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        let largest = try files.map { try FileManager.default.attributesOfItem(atPath: keychain.home + "/" + $0)[.size] as? Int ?? 0 }.max() ?? 0
        let limit = largest + 512 * 1024
        let wrapper = keychain.directory + "/securityd-limited"
        try CommandRunner.writeExecutable(
            Data("#!/bin/sh\nexec prlimit --fsize=\(limit): -- '\(DaemonKeychain.daemonExecutable)' \"$@\"\n".utf8), to: wrapper)
        keychain.daemon = wrapper

        let start = ContinuousClock.now
        let client = try keychain.connect()
        let daemon = try #require(keychain.daemons().first)
        var added = 0
        var failure: KeychainError?
        for i in 0..<5_000 {
            do {
                _ = try client.add(genericPassword(account: "during-\(i)", ["v_Data": .utf8(String(repeating: "x", count: 400))]))
                added += 1
            } catch let error as KeychainError {
                failure = error
                break
            }
        }
        let error = try #require(failure, "the limit was never reached")
        #expect(error.status == OSStatusCode.diskFull, "\(error); daemon log:\n\(keychain.logText)")
        #expect(error.message.contains("File too large") || error.message.contains("SQLite error 13"), "\(error.message)")
        // Still serving, nothing lost; further writes fail the same way, not worse.
        #expect(keychain.daemons() == [daemon], "the daemon survived: \(keychain.logText)")
        for _ in 0..<3 {
            #expect(osStatus { try client.add(genericPassword(account: "refused", ["v_Data": .utf8("x")])) } == OSStatusCode.diskFull)
        }
        var stored = try Self.readAll(client)
        #expect(stored.count == 20 + added)
        for i in 0..<20 { #expect(stored["before-\(i)"] == .utf8("secret \(i)")) }
        #expect(stored["refused"] == nil)

        // Space returns.
        let raised = try CommandRunner.run(executable: "/usr/bin/prlimit", ["--pid", "\(daemon)", "--fsize=unlimited:"])
        #expect(raised.status == 0, "\(raised.stderr)")
        _ = try client.add(genericPassword(account: "after", ["v_Data": .utf8("after")]))
        stored = try Self.readAll(client)
        #expect(stored.count == 20 + added + 1 && stored["after"] == .utf8("after"))
        #expect(keychain.daemons() == [daemon])
        #expect(try keychain.integrityCheck() == "ok")
        RunLength.report(
            "disk full: RLIMIT_FSZ just above the database",
            "\(added) adds until the limit, then errSecDiskFull (-34) ×4, daemon kept serving, 20 earlier items intact, adds work after the limit is raised, integrity_check ok",
            since: start)
    }

    /// A read-only `KEYCHAIN_HOME` (directory and files; the daemon runs without the
    /// capabilities that let root ignore file modes): every call fails at once with the
    /// daemon's reason, errSecIO, and once the home is writable again everything is there.
    @Test func aReadOnlyHomeGivesAnIOErrorAndRecovers() throws {
        let keychain = try DaemonKeychain()
        try Self.fill(keychain.connect(), 0..<20)
        DaemonControl.stop(home: keychain.home)
        if geteuid() == 0 {
            let wrapper = keychain.directory + "/securityd-unprivileged"
            try CommandRunner.writeExecutable(
                Data("#!/bin/sh\nexec setpriv --bounding-set=-all --inh-caps=-all -- '\(DaemonKeychain.daemonExecutable)' \"$@\"\n".utf8),
                to: wrapper)
            keychain.daemon = wrapper
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        func setModes(directory: Int, file: Int) {
            for name in files { chmod(keychain.home + "/" + name, mode_t(file)) }
            chmod(keychain.home, mode_t(directory))
        }
        setModes(directory: 0o500, file: 0o400)
        defer { setModes(directory: 0o700, file: 0o600) }

        let start = ContinuousClock.now
        for attempt in 0..<3 {
            do {
                _ = try keychain.connect().copyMatching(genericPassword(account: "before-0", ["r_Data": .bool(true)]))
                Issue.record("attempt \(attempt): a read-only home served a request")
            } catch let error as KeychainError {
                #expect(error.status == OSStatusCode.io, "\(error)")
                #expect(error.message.hasPrefix("securityd could not start: ") && error.message.contains("Permission denied"), "\(error.message)")
            }
            #expect(keychain.daemons().isEmpty)
        }
        let failed = ContinuousClock.now - start

        setModes(directory: 0o700, file: 0o600)
        keychain.daemon = DaemonKeychain.daemonExecutable  // one that may identify this process
        let stored = try Self.readAll(keychain.connect())
        #expect(stored.count == 20)
        for i in 0..<20 { #expect(stored["before-\(i)"] == .utf8("secret \(i)")) }
        #expect(try keychain.integrityCheck() == "ok")
        RunLength.report(
            "read-only KEYCHAIN_HOME",
            "3 calls each fail with errSecIO (-36) \"securityd could not start: … Permission denied\" in \(String(format: "%.1f", failed / .milliseconds(1) / 3)) ms on average, no daemon left; writable again: 20 items intact, integrity_check ok",
            since: start)
    }
}
