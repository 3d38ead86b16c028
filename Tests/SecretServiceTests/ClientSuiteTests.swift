import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real clients' own test suites, unchanged, against securityd on a private bus — as they
/// pass against gnome-keyring (scripts/client-suites fetches each from PyPI at test time and
/// runs it with pytest; nothing of them is committed): python secretstorage (newest and Debian
/// 12's 3.3.3), python keyring's SecretService and libsecret backend tests, and the Rust
/// `secret-service` crate's tests (Debian's librust-secret-service-dev, built with Debian's cargo).
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && (try? CommandRunner.run(executable: "/usr/bin/python3", ["-c", "import pytest, gi"])).map { $0.status == 0 } == true
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/cargo")
            && FileManager.default.fileExists(atPath: "/usr/share/cargo/registry/secret-service-2.0.1"),
        "needs dbus-daemon, python3-pytest, python3-gi, cargo and librust-secret-service-dev (scripts/install-deps)"))
struct ClientSuiteTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["secretstorage", "secretstorage-3.3.3", "keyring", "rust-secret-service"])
    func theClientsOwnSuitePasses(_ suite: String) async throws {
        let bus = try SessionBus()
        // The suites refuse a bus where nothing owns the name yet: activate securityd first.
        let started = try bus.python("from client import *\nok(call(connect(), ROOT, PROPS, 'Get', 'ss', (SVC, 'Collections')))")
        #expect(started.status == 0, "\(started.stderr) \(bus.keychain.logText)")
        // Downloaded once per build folder, shared by the runs.
        let cache = Self.repository.path + "/.build/client-suites"
        var environment = bus.clientEnvironment
        environment["PIP_CACHE_DIR"] = cache + "/pip"
        // Off the cooperative pool: a suite (and its first download and cargo build) takes minutes.
        let result = try await onThread { [environment] in
            try CommandRunner.run(executable: "/bin/bash", [Self.repository.path + "/scripts/client-suites", suite, cache], environment: environment, clearing: true)
        }
        let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        print("client suite \(suite) against Trousseau: \(summary)")
        #expect(result.status == 0, "\(suite): \(result.stdout) \(result.stderr) \(bus.keychain.logText)")
        // pytest's "21 passed, 6 skipped in 1.2s", or the Rust suite's "31 passed, 0 failed".
        let counts = Self.counts(summary)
        #expect((counts["passed"] ?? 0) > 0 && (counts["failed"] ?? 0) == 0 && (counts["error"] ?? 0) + (counts["errors"] ?? 0) == 0, "\(suite): \(summary)")
    }

    /// "N word" pairs of a summary line: word → N.
    static func counts(_ summary: String) -> [String: Int] {
        let words = summary.split(whereSeparator: { " ,=".contains($0) }).map(String.init)
        var counts: [String: Int] = [:]
        for (number, word) in zip(words, words.dropFirst()) {
            if let n = Int(number) { counts[word] = n }
        }
        return counts
    }
}
