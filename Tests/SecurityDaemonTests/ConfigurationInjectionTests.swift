import Foundation
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

/// What a client can configure about the daemon it starts: nothing that weakens it. Any
/// process of the user may be the one that starts securityd; it must not be able to make
/// the enclave trust a scripted finger or derive passcodes cheaply.
///
/// Passes in a release build too (`swift test -c release --filter ConfigurationInjectionTests`),
/// where the hooks are not compiled at all; in a test build it shows that the client's
/// environment does not reach the daemon, and that the same sensor works when a test names
/// it explicitly (so the refusal is not an accident of the setup).
@Suite final class ConfigurationInjectionTests {
    let directory: String
    let home: String
    let sensor: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        home = directory + "/keychain"
        sensor = directory + "/sensor"
        try FileManager.default.createDirectory(atPath: sensor, withIntermediateDirectories: true)
        try "finger-1\n".write(toFile: sensor + "/enrolled", atomically: true, encoding: .utf8)
        try String(repeating: "match finger-1\n", count: 20).write(toFile: sensor + "/scans", atomically: true, encoding: .utf8)
    }

    deinit {
        DaemonControl.stop(home: home)
        try? FileManagerLite.removeTree(directory)
    }

    /// keychain-probe as an ordinary application whose environment names the test hooks.
    func probe(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("keychain-probe", arguments, environment: [
            "KEYCHAIN_HOME": home, "TROUSSEAU_SECURITYD": DaemonKeychain.daemonExecutable,
            "TROUSSEAU_TEST_SENSOR": sensor, "TROUSSEAU_UNSAFE_FAST_KDF": "1",
            "TROUSSEAU_SECURITYD_LOG": directory + "/securityd.log",
        ])
    }

    @Test func aClientCannotMakeTheEnclaveTrustATestSensor() throws {
        // The probe starts the daemon: the enclave knows no sensor, so no finger is
        // enrolled, and an item only a finger opens cannot even be made.
        let refused = try probe("add-biometric", "alice", "secret")
        #expect(refused.stdout.hasPrefix("status=\(OSStatusCode.authFailed)"), "\(refused.stdout)\(refused.stderr)")
        #expect(try probe("find", "alice").stdout.hasPrefix("status=\(OSStatusCode.itemNotFound)"))
        #expect(try String(contentsOfFile: sensor + "/scans", encoding: .utf8).split(separator: "\n").count == 20, "a scan was taken")
        #if TROUSSEAU_TEST_HOOKS
        // The control: the same sensor, named explicitly by a test harness (test builds
        // only), opens the item with the scripted finger.
        DaemonControl.stop(home: home)
        let harness = try KeychainClient.connect(
            KeychainPaths(home: home), daemon: DaemonKeychain.daemonExecutable,
            daemonEnvironment: CommandRunner.testEnvironment.merging(["TROUSSEAU_TEST_SENSOR": sensor]) { $1 })
        defer { withExtendedLifetime(harness) {} }
        #expect(try probe("add-biometric", "alice", "secret").stdout.hasPrefix("status=0"))
        let found = try probe("find", "alice")
        #expect(found.stdout.contains("data=secret"), "\(found.stdout)\(found.stderr)")
        #endif
    }
}
