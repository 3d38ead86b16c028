import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `security profiles`: configuration profiles (`.mobileconfig`) installed into the user's
/// keychain, or with `--system` into the System keychain (root). The listing follows
/// macOS's `profiles` command (`_computerlevel` for the machine's, the user name otherwise).
enum ProfileCommands {
    static let usage = """
        install file [--system] | list [--system] | show identifier [--system] | remove identifier [--system]
            install  Install a configuration profile (XML or binary property list, optionally
                     CMS-signed, payloads optionally encrypted to a keychain identity). A
                     profile whose signature does not verify is refused; one with the
                     identifier of an installed profile replaces it. Payloads that carry no
                     keychain items are listed as skipped.
            list     List the installed profiles.
            show     Show an installed profile: its signature, payloads and items.
            remove   Remove a profile and exactly the items it installed.
            --system The System keychain's profiles (root only for install and remove).
        """

    static func profiles(_ arguments: [String], _ session: ToolSession) -> Int32 {
        // `--system` before or after the operand, as the issue's and macOS's usage put it.
        let system = arguments.dropFirst(2).contains("--system")
        guard arguments.count >= 2,
            let parsed = try? OptionParser("h").parse(arguments.dropFirst(2).filter { $0 != "--system" })
        else { return ToolCommand.showUsage }
        let owner = system ? "_computerlevel" : userName()
        do {
            return try session.scoped(to: system ? .system : .login) { () throws(KeychainError) -> Int32 in
                switch (arguments[1], parsed.operands.count) {
                case ("install", 1):
                    let path = parsed.operands[0]
                    guard let file = FileManager.default.contents(atPath: path) else {
                        throw KeychainError(status: .io, message: "cannot read \(path)")
                    }
                    let record = try session.call(Service.InstallProfile(file: file), purpose: "install a configuration profile")
                    ToolOutput.print("profile installed: \(record.identifier) (\(verification(record)))\n")
                    for payload in record.payloads where !payload.supported {
                        ToolOutput.print("payload skipped, not supported on Linux: \(payload.type) (\(payload.identifier))\n")
                    }
                case ("list", 0):
                    let profiles = try session.call(Service.CopyProfiles()).profiles
                    for (index, profile) in profiles.enumerated() {
                        ToolOutput.print("\(owner)[\(index + 1)] attribute: profileIdentifier: \(profile.identifier)\n")
                    }
                    ToolOutput.print(
                        profiles.isEmpty ? "There are no configuration profiles installed\n" : "There are \(profiles.count) configuration profiles installed\n")
                case ("show", 1):
                    let profiles = try session.call(Service.CopyProfiles()).profiles
                    guard let index = profiles.firstIndex(where: { $0.identifier == parsed.operands[0] }) else {
                        throw KeychainError(status: .itemNotFound, message: "no configuration profile \(parsed.operands[0]) is installed")
                    }
                    let prefix = "\(owner)[\(index + 1)]"
                    ToolOutput.print(describe(profiles[index], as: prefix))
                    ToolOutput.print(try installedItems(profiles[index].identifier, session, as: prefix))
                case ("remove", 1):
                    try session.call(Service.RemoveProfile(identifier: parsed.operands[0]), purpose: "remove a configuration profile")
                default:
                    return ToolCommand.showUsage
                }
                return 0
            }
        } catch {
            // Not a macOS command: what was wrong with the profile is said, not only Apple's words.
            let failure = KeychainError.from(error)
            let status = ToolOutput.failure("profiles \(arguments[1])", failure)
            if !failure.message.isEmpty, getenv("TROUSSEAU_DEBUG") == nil { ToolOutput.report(failure.message) }
            return status
        }
    }

    private static func verification(_ record: ProfileRecord) -> String {
        switch record.verification {
        case .unsigned: "unsigned"
        case .verified: "verified"
        case .unverified: "unverified"
        }
    }

    /// `profiles show`'s attribute lines for one profile.
    static func describe(_ profile: ProfileRecord, as prefix: String) -> String {
        var lines: [String] = []
        func attribute(_ name: String, _ value: String?) {
            if let value { lines.append("\(prefix) attribute: \(name): \(value)") }
        }
        attribute("name", profile.displayName)
        attribute("configurationDescription", profile.description)
        attribute("installationDate", dateText(profile.installationDate))
        attribute("organization", profile.organization)
        attribute("profileIdentifier", profile.identifier)
        attribute("profileUUID", profile.uuid)
        attribute("profileType", "Configuration")
        attribute("removalDisallowed", profile.removalDisallowed ? "TRUE" : "FALSE")
        attribute("version", String(profile.version))
        attribute("verificationState", verification(profile))
        attribute("signer", profile.signer)
        attribute("encrypted", profile.encrypted ? "TRUE" : "FALSE")
        lines.append("\(prefix) attribute: profileItems:")
        lines.append("\(prefix)     payload count = \(profile.payloads.count)")
        for (index, payload) in profile.payloads.enumerated() {
            let item = "\(prefix)          payload[\(index + 1)]"
            if let name = payload.displayName { lines.append("\(item) name = \(name)") }
            lines.append("\(item) type      = \(payload.type)")
            lines.append("\(item) identifier = \(payload.identifier)")
            lines.append("\(item) uuid = \(payload.uuid)")
            lines.append(payload.supported ? "\(item) keychain items = \(payload.items)" : "\(item) not supported on Linux (skipped)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The items the profile installed, read back from the keychain (its group): class,
    /// label, service or account, and protection class (`kSecAttrAccessible`).
    private static func installedItems(_ identifier: String, _ session: ToolSession, as prefix: String) throws(KeychainError) -> String {
        var lines = ["\(prefix) attribute: keychainItems:"]
        for itemClass in [SecName.kSecClassCertificate, SecName.kSecClassKey, SecName.kSecClassGenericPassword] {
            let query: [String: KeychainValue] = [
                SecName.kSecClass: .string(itemClass), SecName.kSecAttrAccessGroup: .string("trousseau.profile." + identifier),
                "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll"),
            ]
            let found: KeychainValue?
            do {
                found = try session.call(Service.CopyMatching(query))
            } catch where error.status == .itemNotFound {
                continue
            }
            guard case .array(let items)? = found else { continue }
            for case .dictionary(let item) in items {
                var line = "\(prefix)     \(itemClass) accessible=\(item[SecName.kSecAttrAccessible]?.stringValue ?? "?")"
                if let label = item[SecName.kSecAttrLabel]?.stringValue { line += " label=\"\(label)\"" }
                if let service = item[SecName.kSecAttrService]?.stringValue { line += " service=\"\(service)\"" }
                if let account = item[SecName.kSecAttrAccount]?.stringValue { line += " account=\"\(account)\"" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "2026-11-24 18:00:00 +0000", as `profiles show` prints dates.
    private static func dateText(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }

    private static func userName() -> String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return String(getuid()) }
        return String(cString: name)
    }
}
