import KeychainModel

/// `list-keychains`, `default-keychain` and `login-keychain`: there is one keychain, the
/// user's, which is the whole search list, the default and the login keychain. They print
/// its path as macOS prints keychains (`    "/path"`); the system, common and dynamic
/// domains are empty.
enum KeychainListCommands {
    enum Kind {
        case searchList, defaultKeychain, loginKeychain

        /// The function macOS's tool names when setting fails.
        var setter: String {
            switch self {
            case .searchList: "SecKeychainSetSearchList"
            case .defaultKeychain: "SecKeychainSetDefault"
            case .loginKeychain: "SecKeychainSetLogin"
            }
        }
    }

    static func run(_ kind: Kind, _ arguments: [String], _ session: ToolSession) -> Int32 {
        var domain = "user"
        var set = false
        var invalidDomain = false
        guard let operands = KeychainCommands.parse(arguments, "d:hs", { option in
            switch option.name {
            case "d":
                let value = option.value ?? ""
                // A prefix of a domain's name names it, as on macOS ("u" is user).
                guard let named = ["user", "system", "common", "dynamic"].first(where: { $0.hasPrefix(value) }) else {
                    ToolOutput.report("Invalid domain: \(value)")
                    invalidDomain = true
                    return false
                }
                domain = named
            case "s": set = true
            default: return false
            }
            return true
        }), !invalidDomain else { return ToolCommand.showUsage }
        if set {
            guard kind == .searchList || operands.count <= 1 else { return ToolCommand.showUsage }
            // Only this keychain exists: setting it (or, for the search list, nothing) is all there is.
            if let other = operands.first(where: { !session.names(keychain: $0) }) {
                ToolOutput.report("\(kind.setter) \(other): \(KeychainError.appleMessage(for: OSStatusCode.noSuchKeychain))")
                return 1
            }
            return 0
        }
        guard operands.isEmpty else { return ToolCommand.showUsage }
        if domain == "user" { ToolOutput.print("    \"\(session.keychainPath)\"\n") }
        return 0
    }
}
