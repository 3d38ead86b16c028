import KeychainClient
import KeychainModel
import KeychainProtocol

/// `create-keychain`, `delete-keychain` and `set-key-partition-list` (`keychain_create.c`,
/// `keychain_delete.c`, `keychain_set_settings.c`), and the file-keychain side of the
/// keychain commands (``KeychainCommands``).
enum FileKeychainCommands {
    /// `create-keychain [-P] [-p password] [keychains...]`: each keychain under the password,
    /// asked once (twice, to confirm) when not given. `-P` would ask macOS's SecurityAgent;
    /// here it asks on the terminal.
    static func create(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var password: SecretBytes?
        guard let operands = KeychainCommands.parse(arguments, "hp:P", { option in
            if option.name == "p" { password = SecretBytes((option.value ?? "").utf8) }
            return option.name != "h"
        }) else { return ToolCommand.showUsage }
        // macOS's tool with no keychain named creates nothing and says nothing.
        var result: Int32 = 0
        for name in operands {
            let keychain = session.resolve(name)
            guard case .file(let path) = keychain else {
                ToolOutput.report("SecKeychainCreate \(name)", status: .duplicateKeychain)
                result = OSStatusCode.duplicateKeychain.rawValue
                continue
            }
            if password == nil {
                guard let first = PasswordPrompt.read("password for new keychain: "),
                    let second = PasswordPrompt.read("retype password for new keychain: ")
                else { return -1 }
                guard first.isEqual(to: second) else {
                    ToolOutput.error("passwords don't match\n")
                    return 1
                }
                password = first
            }
            do throws(KeychainError) {
                try session.call(Service.CreateKeychain(path: path, password: password ?? SecretBytes([])))
            } catch {
                ToolOutput.report("SecKeychainCreate \(name)", error)
                result = error.status.rawValue
            }
        }
        return result
    }

    /// `delete-keychain [keychains...]`: removes each file and takes it off the search list.
    static func delete(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let operands = KeychainCommands.parse(arguments, "h", { _ in false }) else { return ToolCommand.showUsage }
        var result: Int32 = 0
        for name in operands {
            do throws(KeychainError) {
                switch session.resolve(name) {
                case .file(let path): try session.call(Service.DeleteKeychain(path: path))
                case .login: throw KeychainError(status: .wrPerm)
                case .systemRoots, .system: throw KeychainError(status: .readOnly)
                }
            } catch {
                ToolOutput.report("SecKeychainDelete \(name)", error)
                result = error.status.rawValue
            }
        }
        return result
    }

    /// `set-key-partition-list [-S list] [-k password] [match options...] [keychain]`: checks
    /// the keychain's password, as macOS does, and accepts the list. Partition lists decide
    /// which Apple-signed tools macOS lets use a key without asking; Linux has no such tools
    /// and no prompt to skip, so nothing is enforced by them (docs/SECURITY.md).
    static func setPartitionList(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var password: SecretBytes?
        guard let operands = KeychainCommands.parse(arguments, "ha:c:dD:ej:l:rst:uvwS:k:", { option in
            if option.name == "k" { password = SecretBytes((option.value ?? "").utf8) }
            return option.name != "h"
        }), operands.count <= 1 else { return ToolCommand.showUsage }
        let keychain: KeychainName
        do throws(KeychainError) {
            if let name = operands.first { keychain = session.resolve(name) } else { keychain = try session.defaultKeychain() }
        } catch {
            ToolOutput.report("SecKeychainCopyDefault", error)
            return error.status.rawValue
        }
        guard let entered = password ?? PasswordPrompt.read("password to unlock \(keychain.path(session.paths)): ") else { return -1 }
        do throws(KeychainError) {
            switch keychain {
            case .file(let path): try session.call(Service.UnlockKeychain(path: path, password: entered))
            case .login: try session.call(Service.Unlock(passcode: entered))
            case .systemRoots, .system: throw KeychainError(status: .readOnly)
            }
        } catch {
            ToolOutput.report("SecKeychainUnlock", error)
            return error.status.rawValue
        }
        return 0
    }
}
