import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real clients' own test suites, unchanged, against securityd on a private bus — as they
/// pass against gnome-keyring (scripts/client-suites fetches each from PyPI at test time and
/// runs it with pytest; nothing of them is committed): python secretstorage (newest and Debian
/// 12's 3.3.3), and python keyring's SecretService and libsecret backend tests.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && (try? CommandRunner.run(executable: "/usr/bin/python3", ["-c", "import pytest, gi"])).map { $0.status == 0 } == true,
        "needs dbus-daemon, python3-pytest and python3-gi (scripts/install-deps)"))
struct ClientSuiteTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["secretstorage", "secretstorage-3.3.3", "keyring"])
    func theClientsOwnSuitePasses(_ suite: String) throws {
        let bus = try SessionBus()
        // The suites refuse a bus where nothing owns the name yet: activate securityd first.
        let started = try bus.python("from client import *\nok(call(connect(), ROOT, PROPS, 'Get', 'ss', (SVC, 'Collections')))")
        #expect(started.status == 0, "\(started.stderr) \(bus.keychain.logText)")
        // Downloaded once per build folder, shared by the runs.
        let cache = Self.repository.path + "/.build/client-suites"
        var environment = bus.clientEnvironment
        environment["PIP_CACHE_DIR"] = cache + "/pip"
        let result = try CommandRunner.run(
            executable: "/bin/bash", [Self.repository.path + "/scripts/client-suites", suite, cache], environment: environment, clearing: true)
        let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        print("client suite \(suite) against Trousseau: \(summary)")
        #expect(result.status == 0, "\(suite): \(result.stdout) \(result.stderr) \(bus.keychain.logText)")
        #expect(summary.contains(" passed") && !summary.contains("failed") && !summary.contains("error"), "\(suite): \(summary)")
    }
}
