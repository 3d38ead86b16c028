import ArgumentParser
import Enclave
import KeychainModel
import KeychainStore
import Keybag

/// Until securityd keeps one enclave running between commands, every `security` run starts
/// its own: the lock state a command sets lasts for that command only.
private let perRunNote = "Until securityd keeps the keychain's enclave running between commands, the unlocked state lasts for this command only."

struct UnlockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock-keychain",
        abstract: "Unlock the specified keychain (or the default keychain).",
        discussion: perRunNote)

    @Option(name: .customShort("p"), help: "Use password (visible to other processes in the argument list; prefer the prompt or standard input).")
    var password: String?

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        let passcode = password.map { SecretBytes($0.utf8) } ?? PasswordPrompt.read("password to unlock \(KeychainLocation.databasePath): ")
        do {
            try KeychainLocation.openKeychain().enclave.unlock(passcode: passcode)
        } catch {
            throw fail("SecKeychainUnlock \(KeychainLocation.databasePath)", error)
        }
    }
}

struct LockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock-keychain",
        abstract: "Lock the specified keychain.",
        discussion: perRunNote)

    @Flag(name: .customShort("a"), help: "Lock all keychains.")
    var all = false

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        do {
            try KeychainLocation.openKeychain().enclave.lock()
        } catch {
            throw fail("SecKeychainLock", error)
        }
    }
}

struct SetKeychainPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-keychain-password",
        abstract: "Set password for a keychain.",
        discussion: "Sets the first password, changes it, or (with an empty new password) removes it, which deletes every WhenPasscodeSetThisDeviceOnly item.")

    @Option(name: .customShort("o"), help: "Old password (visible to other processes in the argument list).")
    var oldPassword: String?

    @Option(name: .customShort("p"), help: "New password (visible to other processes in the argument list).")
    var newPassword: String?

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        do {
            let (store, enclave) = try KeychainLocation.openKeychain()
            let hasPasscode = try enclave.status().keybag.hasPasscode
            let old: SecretBytes? =
                hasPasscode ? (oldPassword.map { SecretBytes($0.utf8) } ?? PasswordPrompt.read("Old Password: ")) : nil
            let new: SecretBytes
            if let newPassword {
                new = SecretBytes(newPassword.utf8)
            } else {
                new = PasswordPrompt.read("New Password: ")
                guard new.isEqual(to: PasswordPrompt.read("Retype New Password: ")) else {
                    writeToStandardError("Passwords don't match.\n")
                    throw ExitCode(Int32(UInt8(truncatingIfNeeded: OSStatusCode.authFailed)))
                }
            }
            if try enclave.changePasscode(old: old, new: new.isEmpty ? nil : new) {
                try store.purge(.whenPasscodeSetThisDeviceOnly)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail("SecKeychainChangePassword \(KeychainLocation.databasePath)", error)
        }
    }
}

struct SetKeychainSettings: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-keychain-settings",
        abstract: "Set settings for a keychain.")

    @Flag(name: .customShort("l"), help: "Lock keychain when the system sleeps (accepted; there is no sleep hook yet).")
    var lockOnSleep = false

    @Flag(name: .customShort("u"), help: "Lock keychain after timeout interval.")
    var lockAfterTimeout = false

    @Option(name: .customShort("t"), help: "Timeout interval in seconds (omitting this option specifies \"no timeout\").")
    var timeout: UInt32?

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        do {
            try KeychainLocation.openKeychain().enclave.updateSettings(autoLockSeconds: timeout ?? 0)
        } catch {
            throw fail("SecKeychainSetSettings \(KeychainLocation.databasePath)", error)
        }
    }
}

struct ShowKeychainInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show-keychain-info",
        abstract: "Show the settings for keychain.")

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        let status: EnclaveStatus
        do {
            status = try KeychainLocation.openKeychain().enclave.status()
        } catch {
            throw fail("SecKeychainCopySettings \(KeychainLocation.databasePath)", error)
        }
        let keybag = status.keybag
        let timeout = keybag.autoLockSeconds == 0 ? "no-timeout" : "timeout=\(keybag.autoLockSeconds)s"
        writeToStandardError("Keychain \"\(KeychainLocation.databasePath)\" \(timeout)\n")
        let state: String =
            switch keybag.lockState {
            case .beforeFirstUnlock: "locked (before first unlock)"
            case .unlocked: "unlocked"
            case .locked: "locked"
            }
        print("state: \(state)")
        print("password: \(keybag.hasPasscode ? "set" : "none")")
        print("available classes: \(ProtectionClass.allCases.filter(keybag.isAvailable).map(\.rawValue).joined(separator: " "))")
        print("failed unlocks: \(keybag.failedUnlocks)")
        print("memory locked: \(status.memoryLocked ? "yes" : "no")")
    }
}
