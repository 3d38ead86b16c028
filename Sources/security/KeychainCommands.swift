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
        return call(Service.Unlock(passcode: passcode), keychain: name, function: "SecKeychainUnlock \(name ?? "<NULL>")", session)
    }

    static func lock(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var all = false
        guard let operands = parse(arguments, "ha", { option in
            all = option.name == "a"
            return all
        }), operands.count <= 1, !(all && !operands.isEmpty) else { return ToolCommand.showUsage }
        return call(Service.Lock(), keychain: operands.first, function: "SecKeychainLock \(operands.first ?? "<NULL>")", session)
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

    static func setSettings(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var timeout: UInt32 = 0
        guard let operands = parse(arguments, "hlut:", { option in
            switch option.name {
            case "l", "u": break  // lock on sleep has no hook yet; -u is implied by -t
            case "t": timeout = UInt32(clamping: PasswordAttributes.atoi(option.value ?? ""))
            default: return false
            }
            return true
        }), operands.count <= 1 else { return ToolCommand.showUsage }
        return call(Service.UpdateSettings(autoLockSeconds: timeout), keychain: operands.first,
                    function: "SecKeychainSetSettings \(operands.first ?? session.keychainPath)", session)
    }

    static func showInfo(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let operands = parse(arguments, "h", { _ in false }), operands.count <= 1 else { return ToolCommand.showUsage }
        let name = operands.first ?? session.keychainPath
        let function = "SecKeychainCopySettings \(name)"
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

    private static func call<Request: ServiceRequest>(_ request: Request, keychain name: String?, function: String, _ session: ToolSession) -> Int32 {
        if let name, !session.names(keychain: name) { return report(function, OSStatusCode.noSuchKeychain) }
        do {
            try session.call(request)
            return 0
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
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
