import Foundation
import KeychainTestSupport
import Testing

/// Passcode and lock commands end to end, through the keychain's securityd (started by the
/// first command, stopped at the end): the lock state lasts between commands.
@Suite final class KeychainCommandTests {
    let home: String
    init() throws { home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain" }
    deinit { DaemonControl.stop(home: home) }

    func security(_ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": home], input: input)
    }

    @Test func passwordLifecycle() throws {
        #expect(try security("add-generic-password", "-a", "a", "-s", "s", "-w", "pw").status == 0)
        #expect(try security("show-keychain-info").stdout.contains("password: none"))

        let set = try security("set-keychain-password", input: "1234\n1234\n")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try security("show-keychain-info").stdout.contains("state: unlocked"))
        #expect(try security("lock-keychain").status == 0)
        let info = try security("show-keychain-info")
        #expect(info.stdout.contains("state: locked\n"))
        #expect(info.stdout.contains("available classes: ck dk cku dku"))

        // A restarted daemon starts before first unlock.
        DaemonControl.stop(home: home)
        #expect(try security("show-keychain-info").stdout.contains("available classes: dk dku"))

        let locked = try security("find-generic-password", "-a", "a", "-w")
        #expect(locked.status == 36)
        #expect(locked.stderr == "security: SecKeychainSearchCopyNext: User interaction is not allowed.\n")

        let wrong = try security("unlock-keychain", input: "0000\n")
        #expect(wrong.status == 51)
        #expect(wrong.stderr.hasSuffix("The user name or passphrase you entered is not correct.\n"))
        #expect(try security("unlock-keychain", "-p", "1234").status == 0)
        #expect(try security("show-keychain-info").stdout.contains("failed unlocks: 0"))
        #expect(try security("find-generic-password", "-a", "a", "-w").stdout == "pw\n", "unlocked until locked")

        #expect(try security("set-keychain-password", "-o", "0000", "-p", "5678").status == 51)
        #expect(try security("set-keychain-password", "-o", "1234", "-p", "").status == 0)
        #expect(try security("find-generic-password", "-a", "a", "-w").stdout == "pw\n", "no passcode: class A is the device key's again")
    }

    /// A build that was never installed has no version to say, and says so (an installed one:
    /// InstallationTests).
    @Test func aBuildNotInstalledSaysSoForItsVersion() throws {
        let version = try security("--version")
        #expect(version.status == 0 && version.stdout == "security (Trousseau) development build, not installed (no share/trousseau/version beside it)\n")
        let daemon = try CommandRunner.run(executable: DaemonKeychain.daemonExecutable, ["--version"], clearing: true)
        #expect(daemon.stdout.hasPrefix("securityd (Trousseau) development build"), "\(daemon.stdout)\(daemon.stderr)")
    }

    @Test func mismatchedNewPasswordsChangeNothing() throws {
        let result = try security("set-keychain-password", input: "1234\n4321\n")
        #expect(result.status != 0)
        #expect(result.stderr.contains("Passwords don't match."))
        #expect(try security("show-keychain-info").stdout.contains("password: none"))
    }

    @Test func autoLockSetting() throws {
        #expect(try security("set-keychain-settings", "-t", "300").status == 0)
        #expect(try security("show-keychain-info").stderr == "Keychain \"\(home)/keychain.db\" timeout=300s\n")
        #expect(try security("set-keychain-settings").status == 0)
        #expect(try security("show-keychain-info").stderr == "Keychain \"\(home)/keychain.db\" no-timeout\n")
    }
}
