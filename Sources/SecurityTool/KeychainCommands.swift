import KeychainClient
import KeychainModel
import KeychainProtocol

/// The keychain's own commands: lock and unlock, its password, its settings and state.
enum KeychainCommands {
    static func unlock(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var password: SecretBytes?
        var usePassword = true
        guard let operands = parse(arguments, "hp:u", { option in
            switch option.name {
            case "p": password = SecretBytes((option.value ?? "").utf8)
            case "u": usePassword = false
            default: return false
            }
            return true
        }), operands.count <= 1, operands.first != "" else { return ToolCommand.showUsage }
        let name = operands.first
        guard usePassword else {
            // macOS would ask through its SecurityAgent; there is no agent to ask here.
            return report("SecKeychainUnlock \(name ?? "<NULL>")", OSStatusCode.interactionNotAllowed)
        }
        guard let passcode = password ?? PasswordPrompt.read("password to unlock \(name ?? "default"): ") else { return -1 }
        return call(keychain: name, function: "SecKeychainUnlock \(name ?? "<NULL>")", session,
                    login: Service.Unlock(passcode: passcode), file: { Service.UnlockKeychain(path: $0, password: passcode) })
    }

    static func lock(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var all = false
        guard let operands = parse(arguments, "ha", { option in
            all = option.name == "a"
            return all
        }), operands.count <= 1, !(all && !operands.isEmpty) else { return ToolCommand.showUsage }
        if all {
            do throws(KeychainError) {
                try session.call(Service.LockKeychain(path: nil))
            } catch {
                ToolOutput.report("SecKeychainLockAll", error)
                return error.status.rawValue
            }
        }
        return call(keychain: operands.first, function: "SecKeychainLock \(operands.first ?? "<NULL>")", session,
                    login: Service.Lock(), file: { Service.LockKeychain(path: $0) })
    }

    static func setPassword(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var oldPassword: String?
        var newPassword: String?
        guard let operands = parse(arguments, "ho:p:", { option in
            switch option.name {
            case "o": oldPassword = option.value
            case "p": newPassword = option.value
            default: return false
            }
            return true
        }), operands.count <= 1 else { return ToolCommand.showUsage }
        let function = "SecKeychainChangePassword \(operands.first ?? session.keychainPath)"
        if let name = operands.first, case .file(let path) = session.resolve(name) {
            guard let old = oldPassword.map({ SecretBytes($0.utf8) }) ?? PasswordPrompt.read("Old Password: "),
                let new = newPassword.map({ SecretBytes($0.utf8) }) ?? PasswordPrompt.read("New Password: ")
            else { return -1 }
            return perform(Service.ChangeKeychainPassword(path: path, old: old, new: new), function: function, session)
        }
        if let name = operands.first, !session.names(keychain: name) { return report(function, OSStatusCode.noSuchKeychain) }
        do {
            let hasPasscode = try session.call(Service.KeychainStatusRequest()).hasPasscode
            var old: SecretBytes?
            if hasPasscode {
                guard let entered = oldPassword.map({ SecretBytes($0.utf8) }) ?? PasswordPrompt.read("Old Password: ") else { return -1 }
                old = entered
            }
            let new: SecretBytes
            if let newPassword {
                new = SecretBytes(newPassword.utf8)
            } else {
                guard let first = PasswordPrompt.read("New Password: "), let second = PasswordPrompt.read("Retype New Password: ") else { return -1 }
                guard first.isEqual(to: second) else {
                    ToolOutput.error("Passwords don't match.\n")
                    return OSStatusCode.authFailed.rawValue
                }
                new = first
            }
            // Removing the password makes the daemon delete WhenPasscodeSetThisDeviceOnly items.
            try session.call(Service.ChangePasscode(old: old, new: new.isEmpty ? nil : new))
            return 0
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
        }
    }

    /// `keychain-migrate --tpm [--tcti tcti] [-p password]` (Linux): the login keychain's
    /// device key into a TPM 2.0; prints what holds it now.
    static func migrate(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hp:", longOptions: ["tpm": false, "tcti": true]).parse(arguments.dropFirst()),
            parsed.operands.isEmpty, parsed.options.contains(where: { $0.name == "tpm" }),
            parsed.options.allSatisfy({ ["tpm", "tcti", "p"].contains($0.name) })
        else { return ToolCommand.showUsage }
        let tcti = parsed.options.last { $0.name == "tcti" }?.value
        let password = parsed.options.last { $0.name == "p" }?.value
        let function = "SecKeychainMigrate \(session.keychainPath)"
        do {
            var passcode: SecretBytes?
            if try session.call(Service.KeychainStatusRequest()).hasPasscode {
                guard let entered = password.map({ SecretBytes($0.utf8) }) ?? PasswordPrompt.read("password to unlock keychain: ") else { return -1 }
                passcode = entered
            }
            let status = try session.call(Service.MigrateToTPM(tcti: tcti, passcode: passcode))
            ToolOutput.print("device key: \(status.deviceKey)\n")
            return 0
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
        }
    }

    /// `set-keychain-settings [-lu] [-t timeout] [keychain]`. Without `-t` there is no
    /// timeout (`-u` alone sets none, as on macOS); `-l` is recorded: nothing tells a
    /// keychain here that the machine sleeps yet.
    static func setSettings(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var timeout: UInt32 = 0
        var lockOnSleep = false
        guard let operands = parse(arguments, "hlut:", { option in
            switch option.name {
            case "l": lockOnSleep = true
            case "u": break  // implied by -t
            case "t": timeout = UInt32(clamping: PasswordAttributes.atoi(option.value ?? ""))
            default: return false
            }
            return true
        }), operands.count <= 1 else { return ToolCommand.showUsage }
        let settings = KeychainSettings(autoLockSeconds: timeout, lockOnSleep: lockOnSleep)
        return call(keychain: operands.first, function: "SecKeychainSetSettings \(operands.first ?? session.keychainPath)", session,
                    login: Service.UpdateSettings(autoLockSeconds: timeout), file: { Service.SetKeychainSettings(path: $0, settings: settings) })
    }

    static func showInfo(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let operands = parse(arguments, "h", { _ in false }), operands.count <= 1 else { return ToolCommand.showUsage }
        let name = operands.first ?? session.keychainPath
        let function = "SecKeychainCopySettings \(name)"
        if case .file(let path) = session.resolve(name) {
            do throws(KeychainError) {
                let info = try session.call(Service.KeychainInfo(path: path))
                let timeout = info.settings.autoLockSeconds == 0 ? "no-timeout" : "timeout=\(info.settings.autoLockSeconds)s"
                let lockOnSleep = info.settings.lockOnSleep ? " lock-on-sleep" : ""
                let interval = info.settings.autoLockSeconds == 0 ? "" : " use-lock-interval"
                ToolOutput.error("Keychain \"\(name)\"\(lockOnSleep)\(interval) \(timeout)\n")
                return 0
            } catch {
                ToolOutput.report(function, error)
                return error.status.rawValue
            }
        }
        if !session.names(keychain: name) { return report(function, OSStatusCode.noSuchKeychain) }
        let status: Service.KeychainStatus
        do {
            status = try session.call(Service.KeychainStatusRequest())
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
        }
        let timeout = status.autoLockSeconds == 0 ? "no-timeout" : "timeout=\(status.autoLockSeconds)s"
        ToolOutput.error("Keychain \"\(name)\" \(timeout)\n")
        // Linux additions: the state macOS shows in Keychain Access.
        ToolOutput.print(
            """
            state: \(status.stateDescription)
            password: \(status.hasPasscode ? "set" : "none")
            available classes: \(status.availableClasses.map(\.rawValue).joined(separator: " "))
            failed unlocks: \(status.failedUnlocks)
            memory locked: \(status.memoryLocked ? "yes" : "no")
            device key: \(status.deviceKey)

            """)
        return 0
    }

    /// Parses `arguments` with `specification`, handing each option to `take` (false: a
    /// usage error); the operands, or nil for a usage error.
    static func parse(_ arguments: [String], _ specification: String, _ take: (OptionParser.Option) -> Bool) -> [String]? {
        guard let parsed = try? OptionParser(specification).parse(arguments.dropFirst()),
            parsed.options.allSatisfy(take)
        else { return nil }
        return parsed.operands
    }

    /// Sends `login` when `name` names the login keychain (or is absent), `file` with the
    /// path when it names a file keychain; reports a failure as `function` did on macOS.
    private static func call<Login: ServiceRequest, File: ServiceRequest>(
        keychain name: String?, function: String, _ session: ToolSession, login: Login, file: (String) -> File
    ) -> Int32 {
        switch name.map(session.resolve) ?? .login {
        case .login: perform(login, function: function, session)
        case .file(let path): perform(file(path), function: function, session)
        case .systemRoots, .system: report(function, OSStatusCode.noSuchKeychain)
        }
    }

    private static func perform<Request: ServiceRequest>(_ request: Request, function: String, _ session: ToolSession) -> Int32 {
        do {
            try session.call(request)
            return 0
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
        }
    }

    /// The words `-v` echoes, the values of `flags` hidden.
    static func hiding(_ flags: Set<String>) -> @Sendable ([String]) -> [String] {
        { words in
            var hidden = words
            for index in hidden.indices.dropFirst() where flags.contains(hidden[index - 1]) { hidden[index] = "<hidden>" }
            for index in hidden.indices {
                for flag in flags where hidden[index].hasPrefix(flag) && hidden[index].count > flag.count { hidden[index] = flag + "<hidden>" }
            }
            return hidden
        }
    }

    private static func report(_ function: String, _ status: OSStatusCode) -> Int32 {
        ToolOutput.report(function, status: status)
        return status.rawValue
    }
}

extension Service.KeychainStatus {
    var stateDescription: String {
        switch lockState {
        case .beforeFirstUnlock: "locked (before first unlock)"
        case .unlocked: "unlocked"
        case .locked: "locked"
        }
    }

    /// The classes usable now.
    var availableClasses: [ProtectionClass] {
        ProtectionClass.allCases.filter { $0.isAvailable(in: lockState, hasPasscode: hasPasscode) }
    }
}
