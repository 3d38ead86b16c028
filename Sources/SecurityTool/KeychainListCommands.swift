import KeychainClient
import KeychainModel
import KeychainProtocol

/// `list-keychains`, `default-keychain` and `login-keychain` (`keychain_list.c`): the user's
/// search list and default keychain, which securityd keeps; the login keychain is the
/// user's keychain. They print paths as macOS prints keychains (`    "/path"`); the system
/// domain's search list and default are the System keychain, as on macOS, and the common
/// and dynamic domains are empty.
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
            guard domain == "user" else {
                // The system, common and dynamic domains have no keychains here to list.
                ToolOutput.report("\(kind.setter): \(KeychainError.appleMessage(for: OSStatusCode.wrPerm))")
                return OSStatusCode.wrPerm.rawValue
            }
            let named = operands.map { session.resolve($0).path(session.paths) }
            do throws(KeychainError) {
                switch kind {
                case .searchList: try session.call(Service.SearchList(replacement: named))
                case .defaultKeychain: try session.call(Service.DefaultKeychain(replacement: named.first ?? session.keychainPath))
                case .loginKeychain:
                    // The login keychain is the one unlocked at login: it cannot be another.
                    if let other = operands.first(where: { !session.names(keychain: $0) }) {
                        throw KeychainError(status: OSStatusCode.noSuchKeychain, message: other)
                    }
                }
            } catch {
                ToolOutput.report(kind.setter, error)
                return 1
            }
            return 0
        }
        guard operands.isEmpty else { return ToolCommand.showUsage }
        guard domain == "user" else {
            if domain == "system", kind != .loginKeychain { ToolOutput.print("    \"\(KeychainName.systemPath)\"\n") }
            return 0
        }
        let listed: [String]
        do throws(KeychainError) {
            switch kind {
            case .searchList: listed = try session.call(Service.SearchList(replacement: nil)).paths
            case .defaultKeychain: listed = try session.call(Service.DefaultKeychain(replacement: nil)).paths
            case .loginKeychain: listed = [session.keychainPath]
            }
        } catch {
            ToolOutput.report(kind == .searchList ? "SecKeychainCopySearchList" : "SecKeychainCopyDefault", error)
            return 1
        }
        ToolOutput.print(listed.map { "    \"\($0)\"\n" }.joined())
        return 0
    }
}
