import ArgumentParser
import KeychainClient
import KeychainModel

struct UnlockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock-keychain",
        abstract: "Unlock the specified keychain (or the default keychain).")

    @Option(name: .customShort("p"), help: "Use password (visible to other processes in the argument list; prefer the prompt or standard input).")
    var password: String?

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        let passcode = password.map { SecretBytes($0.utf8) } ?? PasswordPrompt.read("password to unlock \(KeychainLocation.databasePath): ")
        do {
            try KeychainLocation.connect().call(.unlock(passcode: passcode))
        } catch {
            throw fail("SecKeychainUnlock \(KeychainLocation.databasePath)", error)
        }
    }
}

struct LockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock-keychain",
        abstract: "Lock the specified keychain.")

    @Flag(name: .customShort("a"), help: "Lock all keychains.")
    var all = false

    @Argument(help: "The keychain (only the default keychain exists).")
    var keychain: String?

    func run() throws {
        do {
            try KeychainLocation.connect().call(.lock)
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
            let keychain = try KeychainLocation.connect()
            let hasPasscode = try KeychainStatus(keychain.call(.keychainStatus)).hasPasscode
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
            // Removing the password makes the daemon delete WhenPasscodeSetThisDeviceOnly items.
            try keychain.call(.changePasscode(old: old, new: new.isEmpty ? nil : new))
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
            try KeychainLocation.connect().call(.updateSettings(autoLockSeconds: timeout ?? 0))
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
        let status: KeychainStatus
        do {
            status = try KeychainStatus(KeychainLocation.connect().call(.keychainStatus))
        } catch {
            throw fail("SecKeychainCopySettings \(KeychainLocation.databasePath)", error)
        }
        let timeout = status.autoLockSeconds == 0 ? "no-timeout" : "timeout=\(status.autoLockSeconds)s"
        writeToStandardError("Keychain \"\(KeychainLocation.databasePath)\" \(timeout)\n")
        print("state: \(status.stateDescription)")
        print("password: \(status.hasPasscode ? "set" : "none")")
        print("available classes: \(status.availableClasses.map(\.rawValue).joined(separator: " "))")
        print("failed unlocks: \(status.failedUnlocks)")
        print("memory locked: \(status.memoryLocked ? "yes" : "no")")
    }
}

/// The keychain's state as securityd reports it.
struct KeychainStatus {
    var state: LockState
    var hasPasscode: Bool
    var autoLockSeconds: Int64
    var failedUnlocks: Int64
    var memoryLocked: Bool

    init(_ value: KeychainValue?) throws {
        guard case .dictionary(let fields)? = value,
            case .number(let rawState)? = fields["state"], let state = LockState(rawValue: UInt8(clamping: rawState)),
            case .bool(let passcode)? = fields["passcode"],
            case .number(let autoLock)? = fields["autoLockSeconds"], case .number(let failed)? = fields["failedUnlocks"],
            case .bool(let memoryLocked)? = fields["memoryLocked"]
        else { throw KeychainError.decode("malformed keychain status") }
        self.state = state
        hasPasscode = passcode
        autoLockSeconds = autoLock
        failedUnlocks = failed
        self.memoryLocked = memoryLocked
    }

    var stateDescription: String {
        switch state {
        case .beforeFirstUnlock: "locked (before first unlock)"
        case .unlocked: "unlocked"
        case .locked: "locked"
        }
    }

    /// The classes usable now.
    var availableClasses: [ProtectionClass] {
        ProtectionClass.allCases.filter { $0.isAvailable(in: state, hasPasscode: hasPasscode) }
    }
}
