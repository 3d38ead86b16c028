import Foundation
import KeychainCrypto
import KeychainModel
import KeychainTestSupport
import Testing

@testable import EnclaveBackend

/// The enclave on a TPM 2.0 (swtpm, one per test, as an ordinary user), through `security`
/// and real securityd and enclave processes: the device key and the passcode's key are in
/// the TPM; a copy of the home directory does not open on another TPM; wrong passcodes
/// reach the TPM's dictionary-attack lockout, which deleting files does not reset; nothing
/// derived from the passcode, and no key, crosses the TPM's bus in clear; a cleared TPM is
/// reported and changes nothing, and a backup restores onto a new keychain.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "swtpm is not installed")) final class TPMBackendTests {
    let tpm: SoftwareTPM
    let keychain: DaemonKeychain
    let passcode = "correct horse battery staple"

    init() throws {
        tpm = try SoftwareTPM()
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TPM": tpm.tcti])
    }

    /// `security` on the keychain (TROUSSEAU_DEBUG: the enclave's reason after Apple's message).
    func security(_ arguments: String..., home: String? = nil, tcti: String? = nil, input: String = "") throws -> CommandResult {
        try CommandRunner.run(
            "security", arguments,
            environment: ["KEYCHAIN_HOME": home ?? keychain.home, "TROUSSEAU_TPM": tcti ?? tpm.tcti, "TROUSSEAU_DEBUG": "1"], input: input)
    }

    /// Stops securityd (and with it the enclave): the next call starts both, before first unlock.
    func reboot(_ home: String? = nil) {
        DaemonControl.stop(home: home ?? keychain.home)
    }

    /// A keychain on the TPM with one password item and a passcode.
    func populate(tcti: String? = nil) throws {
        let added = try security("add-generic-password", "-a", "alice", "-s", "mail", "-w", "s3cret", tcti: tcti)
        try #require(added.status == 0, "\(added.stderr)")
        let set = try security("set-keychain-password", "-p", passcode, tcti: tcti)
        try #require(set.status == 0, "\(set.stderr)")
    }

    func readSecret(home: String? = nil, tcti: String? = nil) throws -> CommandResult {
        try security("find-generic-password", "-a", "alice", "-s", "mail", "-w", home: home, tcti: tcti)
    }

    @Test func theDeviceKeyIsInTheTPMAndThePasscodeLocksAndUnlocks() throws {
        try populate()
        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        #expect(files.contains(TPMDeviceKey.fileName) && !files.contains(FileDeviceKey.fileName), "\(files)")
        let info = try security("show-keychain-info")
        #expect(info.stdout.contains("device key: TPM 2.0 (\(tpm.tcti))"), "\(info.stdout)\(info.stderr)")

        #expect(try security("lock-keychain").status == 0)
        #expect(try readSecret().status == 36, "locked: class A needs the passcode")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")

        reboot()
        #expect(try readSecret().status == 36, "after a restart, before first unlock")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
        #expect(try tpm.lockoutCounter() == 0, "right passcodes count nothing")

        // Changing the passcode makes a new TPM key; the old passcode no longer opens it.
        #expect(try security("set-keychain-password", "-o", passcode, "-p", "new passcode").status == 0)
        reboot()
        #expect(try security("unlock-keychain", "-p", passcode).status == 51)
        #expect(try security("unlock-keychain", "-p", "new passcode").status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func aCopyOfTheHomeOnAnotherTPMDoesNotOpenWithTheRightPasscode() throws {
        try populate()
        reboot()
        let other = try SoftwareTPM()
        let thief = try DaemonKeychain()
        try? FileManager.default.removeItem(atPath: thief.home)
        try FileManager.default.copyItem(atPath: keychain.home, toPath: thief.home)

        let unlock = try security("unlock-keychain", "-p", passcode, home: thief.home, tcti: other.tcti)
        #expect(unlock.status != 0)
        #expect(unlock.stderr.contains("cleared or replaced"), "\(unlock.stderr)")
        #expect(try readSecret(home: thief.home, tcti: other.tcti).stdout.isEmpty)
        #expect(try other.lockoutCounter() == 0)

        // The original, on its own TPM, is untouched.
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func wrongPasscodesReachTheTPMLockoutWhichDeletingFilesDoesNotReset() throws {
        try populate()
        #expect(try security("lock-keychain").status == 0)
        // swtpm's defaults: three failures, then lockout; one forgiven every 1000 s.
        for attempt in 1...3 {
            let wrong = try security("unlock-keychain", "-p", "guess \(attempt)")
            #expect(wrong.status == 51 && wrong.stderr.contains("not correct"), "\(wrong.stderr)")
            #expect(try tpm.lockoutCounter() == attempt, "the TPM counted guess \(attempt)")
        }
        let right = try security("unlock-keychain", "-p", passcode)
        #expect(right.status == 51 && right.stderr.contains("disabled") && right.stderr.contains("17 minutes"), "\(right.stderr)")
        #expect(try readSecret().status == 36)

        // A process of the user deletes every file but the database and the keys it cannot
        // do without, and restarts the daemon: the TPM still refuses.
        reboot()
        for file in try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        where ![TPMDeviceKey.fileName, KeybagFile.fileName].contains(file) && !file.hasPrefix("keychain") {
            try FileManager.default.removeItem(atPath: keychain.home + "/" + file)
        }
        let again = try security("unlock-keychain", "-p", passcode)
        #expect(again.status == 51 && again.stderr.contains("disabled"), "\(again.stderr)")

        // The TPM's owner clears the lockout (tpm2-tools, as an administrator): the right
        // passcode opens the keychain, nothing lost.
        let cleared = try tpm.tool("tpm2_dictionarylockout", ["--clear-lockout"])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func aClearedTPMIsReportedChangesNothingAndABackupRestoresOntoANewKeychain() throws {
        try populate()
        let backup = keychain.directory + "/before.backup"
        let made = try security("backup", "create", "--out", backup, input: "backup pw\nbackup pw\n\(passcode)\n")
        try #require(made.status == 0, "\(made.stdout)\(made.stderr)")
        reboot()
        let before = try Self.contents(of: keychain.home)

        let clear = try tpm.tool("tpm2_clear", ["-c", "p"])
        try #require(clear.status == 0, "\(clear.stderr)")
        let unlock = try security("unlock-keychain", "-p", passcode)
        #expect(unlock.status != 0 && unlock.stderr.contains("cleared or replaced"), "\(unlock.stderr)")
        #expect(try readSecret().stdout.isEmpty)
        reboot()
        let after = try Self.contents(of: keychain.home)
        #expect(after == before && after.keys.contains(KeybagFile.fileName), "nothing was re-keyed or rewritten: \(after.keys.sorted())")

        // The user's choice: the old keychain aside, a new one on the (cleared) TPM, the backup restored.
        try FileManager.default.moveItem(atPath: keychain.home, toPath: keychain.directory + "/old-keychain")
        let restored = try security("backup", "restore", backup, input: "backup pw\n")
        #expect(restored.status == 0, "\(restored.stdout)\(restored.stderr)")
        #expect(try readSecret().stdout == "s3cret\n")
        #expect(FileManager.default.fileExists(atPath: keychain.home + "/" + TPMDeviceKey.fileName))
    }

    /// The bytes of the keychain's key files (the keybag, the TPM blob, the throttle).
    static func contents(of directory: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory)
        where !name.hasPrefix("keychain.db") && name != "securityd.lock" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                out[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            }
        }
        return out
    }
}
