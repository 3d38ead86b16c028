import Foundation
import KeychainModel
import KeychainTestSupport
import Testing

/// No secret, account, service or label in the daemon's log, in error messages (the
/// client's and the tool's), in any file of the keychain, or in a core file — there are
/// none: securityd and the enclave crash without dumping.
@Suite struct LeakTests {
    static let account = "acct-Zq7xK2", service = "svce-Wm3kT8", secret = "secret-Pv9rB4", label = "labl-Hs2dN6"
    static let needles = [account, service, secret, label]

    static func leaks(in bytes: Data, _ place: String) -> [String] {
        needles.filter { bytes.range(of: Data($0.utf8)) != nil }.map { "\($0) in \(place)" }
    }

    @Test func noSecretOrAttributeLeaksAnywhere() throws {
        let start = ContinuousClock.now
        let keychain = try DaemonKeychain()
        let client = try keychain.connect()
        var found: [String] = []
        let item = genericPassword(account: Self.account, service: Self.service, ["v_Data": .utf8(Self.secret), "labl": .string(Self.label)])
        _ = try client.add(item)
        // Failing calls that carry the values: duplicate, missing, wrong types, bad keys.
        let failing: [() throws -> Void] = [
            { _ = try client.add(item) },
            { try client.update(genericPassword(account: Self.secret), attributes: ["labl": .string(Self.label)]) },
            { try client.update(genericPassword(account: Self.account), attributes: ["acct": .data(Data(Self.secret.utf8)), "svce": .bool(true)]) },
            { _ = try client.copyMatching(genericPassword(account: Self.account, ["m_Limit": .string(Self.secret)])) },
            { _ = try client.copyMatching(["class": .string("nope"), "acct": .string(Self.account), "svce": .data(Data(Self.service.utf8))]) },
            { _ = try client.add(genericPassword(account: Self.account, ["nope": .utf8(Self.secret)])) },
            { _ = try client.add(genericPassword(account: Self.account, ["v_Data": .string(Self.secret), "pdmn": .string(Self.label)])) },
            { try client.delete(genericPassword(account: Self.secret, service: Self.label)) },
        ]
        for (index, call) in failing.enumerated() {
            do {
                try call()
                found.append("failing call \(index) succeeded")
            } catch let error as KeychainError {
                found += Self.leaks(in: Data("\(error.description) \(error.message) \(String(describing: error.details))".utf8), "error \(error.status)")
            }
        }
        // The tool's messages.
        let environment = keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new }
        let added = try CommandRunner.run(
            "security", ["add-generic-password", "-a", Self.account, "-s", Self.service, "-w", Self.secret, "-l", Self.label], environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        for arguments in [
            ["add-generic-password", "-a", Self.account, "-s", Self.service, "-w", Self.secret, "-l", Self.label],
            ["find-generic-password", "-a", Self.secret, "-s", Self.label],
            ["delete-generic-password", "-a", Self.secret],
            ["add-generic-password", "-a", Self.account, "-s", Self.service, "-X", "0g" + Self.secret],
        ] {
            let result = try CommandRunner.run("security", arguments, environment: environment)
            #expect(result.status != 0)
            found += Self.leaks(in: result.standardError + result.standardOutput, "security \(arguments[0])'s output")
        }

        // Crashes: no core file (RLIMIT_CORE 0 and non-dumpable), wherever it would go.
        let daemon = try #require(keychain.daemons().first), enclave = try #require(keychain.enclaves().first)
        var directories = Set([keychain.home])
        for pid in [daemon, enclave] {
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max core file size") && $0.split(separator: " ").contains("0") })
            if let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") { directories.insert(cwd) }
        }
        let before = directories.map { Set((try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? []) }
        kill(enclave, SIGABRT)
        kill(daemon, SIGSEGV)
        for pid in [daemon, enclave] { while DaemonControl.isRunning(pid) { usleep(1_000) } }
        usleep(100_000)
        for (directory, earlier) in zip(directories, before) {
            let now = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            #expect(now.subtracting(earlier).filter { $0.hasPrefix("core") }.isEmpty, "a core file in \(directory)")
        }

        // Every file of the keychain (database, WAL, keybag, throttle, …) and the log.
        _ = try keychain.connect().copyMatching(genericPassword(account: Self.account))  // a new daemon, new writes
        let enumerator = FileManager.default.enumerator(atPath: keychain.directory)
        var scanned = 0
        while let name = enumerator?.nextObject() as? String {
            let path = keychain.directory + "/" + name
            guard let bytes = FileManager.default.contents(atPath: path) else { continue }
            scanned += 1
            found += Self.leaks(in: bytes, name)
        }
        #expect(keychain.logText.contains("starting"), "the log was written")
        // No crash report: the runtime's would print registers and the memory they point at.
        #expect(!keychain.logText.contains("Registers") && !keychain.logText.contains("crashed"), "\(keychain.logText)")
        #expect(scanned >= 6)
        #expect(found.isEmpty, "\(found)")
        RunLength.report(
            "leaks: secret, account, service, label",
            "8 failing client calls and 4 tool commands carrying them, SIGSEGV of securityd and SIGABRT of the enclave, "
                + "\(scanned) files scanned (database, WAL, keybag, throttle, log): \(found.count) found, no core file, no crash report", since: start)
    }
}
