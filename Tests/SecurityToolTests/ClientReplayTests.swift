import Foundation
import KeychainTestSupport
import Testing

/// The exact command lines two well-known clients of macOS's `security` issue, replayed
/// against this one, with their own parsing of what it prints:
///
/// - go-keyring (gh, chezmoi…) writes through `security -i` so that the secret stays out
///   of the process list: `add-generic-password -U -s <q> -a <q> -w <q>` on standard input,
///   each value shell-quoted and the password stored as `go-keyring-base64:<base64>`; it
///   reads with `find-generic-password -s S -wa U` and trims the combined output; it
///   deletes with `delete-generic-password -s S -a U`, and recognises a missing item by
///   "could not be found" in the output.
/// - fastlane's credentials manager (the `security` gem) runs, through the shell,
///   `security add-internet-password -a U -s deliver.U -w P`,
///   `security 2>&1 find-internet-password -g -s deliver.U` and
///   `security delete-internet-password -s deliver.U`, and parses the merged output with
///   the gem's regular expressions.
@Suite final class ClientReplayTests {
    let home: String
    init() throws { home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain" }
    deinit { DaemonControl.stop(home: home) }

    // MARK: go-keyring

    struct NotFound: Error {}

    /// shellescape.Quote: unchanged when every character is safe, else single-quoted with
    /// each `'` written as `'"'"'`.
    static func shellQuote(_ text: String) -> String {
        if text.isEmpty { return "''" }
        let safe = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_@%+=:,./-"))
        if text.unicodeScalars.allSatisfy({ $0.isASCII && safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\"'\"'") + "'"
    }

    func goKeyringSet(service: String, user: String, password: String) throws {
        let encoded = "go-keyring-base64:" + Data(password.utf8).base64EncodedString()
        let command = "add-generic-password -U -s \(Self.shellQuote(service)) -a \(Self.shellQuote(user)) -w \(Self.shellQuote(encoded))\n"
        #expect(command.utf8.count <= 4096, "go-keyring refuses longer lines")
        let result = try CommandRunner.run("security", ["-i"], environment: ["KEYCHAIN_HOME": home], input: command)
        #expect(result.status == 0, "\(result.stderr)")
    }

    func goKeyringGet(service: String, user: String) throws -> String {
        let result = try CommandRunner.run(
            "security", ["find-generic-password", "-s", service, "-wa", user], environment: ["KEYCHAIN_HOME": home])
        let combined = result.stdout + result.stderr
        if result.status != 0 {
            if combined.contains("could not be found") { throw NotFound() }
            throw CommandFailed(result: result)
        }
        let trimmed = combined.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("go-keyring-base64:") {
            let decoded = try #require(Data(base64Encoded: String(trimmed.dropFirst("go-keyring-base64:".count))))
            return String(decoding: decoded, as: UTF8.self)
        }
        return trimmed
    }

    func goKeyringDelete(service: String, user: String?) throws {
        let arguments = ["delete-generic-password", "-s", service] + (user.map { ["-a", $0] } ?? [])
        let result = try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": home])
        if (result.stdout + result.stderr).contains("could not be found") { throw NotFound() }
        guard result.status == 0 else { throw CommandFailed(result: result) }
    }

    struct CommandFailed: Error {
        var result: CommandResult
    }

    @Test func goKeyringRoundTrips() throws {
        let secrets = [
            ("gh:github.com", "octocat", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
            ("my app's service", "user with spaces", "line one\nline two"),
            ("chezmoi", "é", "naïve \"quoted\" 'single' \\ back$lash ;${}"),
            ("empty", "nobody", ""),
        ]
        for (service, user, password) in secrets {
            try goKeyringSet(service: service, user: user, password: password)
            #expect(try goKeyringGet(service: service, user: user) == password)
        }
        // Set again updates (-U) rather than failing with a duplicate.
        try goKeyringSet(service: "gh:github.com", user: "octocat", password: "rotated")
        #expect(try goKeyringGet(service: "gh:github.com", user: "octocat") == "rotated")

        try goKeyringDelete(service: "gh:github.com", user: "octocat")
        #expect(throws: NotFound.self) { try self.goKeyringGet(service: "gh:github.com", user: "octocat") }
        #expect(throws: NotFound.self) { try self.goKeyringDelete(service: "gh:github.com", user: "octocat") }
    }

    @Test func goKeyringDeleteAllDeletesUntilNotFound() throws {
        for user in ["a", "b", "c"] { try goKeyringSet(service: "svc", user: user, password: "pw-\(user)") }
        try goKeyringSet(service: "other", user: "a", password: "kept")
        var deleted = 0
        while true {
            do {
                try goKeyringDelete(service: "svc", user: nil)
                deleted += 1
            } catch is NotFound {
                break
            }
        }
        #expect(deleted == 3)
        #expect(try goKeyringGet(service: "other", user: "a") == "kept")
    }

    // MARK: fastlane (the security gem)

    /// Ruby's Shellwords.escape: a backslash before every character outside
    /// `[A-Za-z0-9_\-.,:+\/@\n]`; an empty string is `''`.
    static func rubyShellEscape(_ text: String) -> String {
        if text.isEmpty { return "''" }
        let plain = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,:+/@\n")
        return text.unicodeScalars.map { plain.contains($0) ? String($0) : "\\" + String($0) }.joined()
    }

    /// Runs `line` through /bin/sh, as Ruby's `system` and backticks do, with the built
    /// `security` first on PATH.
    func shell(_ line: String) throws -> CommandResult {
        let path = CommandRunner.productsDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try CommandRunner.run(executable: "/bin/sh", ["-c", line], environment: ["KEYCHAIN_HOME": home, "PATH": path])
    }

    /// What the gem's `password_from_output` makes of the merged output: nil when a line
    /// starts with `security: `, else the keychain, the attributes and the password.
    static func parseGemOutput(_ output: String) throws -> (keychain: String?, attributes: [String: String], password: String?)? {
        if output.split(separator: "\n").contains(where: { $0.hasPrefix("security: ") }) { return nil }
        let keychainLine = try Regex(#"^keychain: "(.+)""#), attribute = try Regex(#""(\w{4})".+="(.+)""#)
        let hexAttribute = try Regex(#""(\w{4})"<blob>=0x([[:xdigit:]]+)"#)
        let quotedPassword = try Regex(#"^password: "(.+)""#), hexPassword = try Regex(#"^password: 0x([[:xdigit:]]+)"#)
        var keychain: String?
        var attributes: [String: String] = [:]
        var password: String?
        for line in output.split(separator: "\n").map(String.init) {
            func group(_ match: Regex<AnyRegexOutput>.Match, _ index: Int) -> String { String(match.output[index].substring ?? "") }
            if let match = try keychainLine.firstMatch(in: line) {
                keychain = group(match, 1)
            } else if let match = try attribute.firstMatch(in: line) {
                attributes[group(match, 1)] = group(match, 2)
            } else if let match = try hexAttribute.firstMatch(in: line) {
                attributes[group(match, 1)] = decodeHex(group(match, 2))
            } else if let match = try quotedPassword.firstMatch(in: line) {
                password = group(match, 1)
            } else if let match = try hexPassword.firstMatch(in: line) {
                password = decodeHex(group(match, 1))
            }
        }
        return (keychain, attributes, password)
    }

    static func decodeHex(_ hex: String) -> String {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index != hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func fastlaneCredentialsManagerRoundTrips() throws {
        let user = "felix@krausefx.com", password = "app-specific pa$$word \"1\""
        let server = "deliver.\(user)"
        let added = try shell(
            "security add-internet-password -a \(Self.rubyShellEscape(user)) -s \(Self.rubyShellEscape(server)) -w \(Self.rubyShellEscape(password))")
        #expect(added.status == 0, "\(added.stderr)")

        let found = try #require(try Self.parseGemOutput(shell("security 2>&1 find-internet-password -g -s \(Self.rubyShellEscape(server))").stdout))
        #expect(found.password == password)
        #expect(found.attributes["acct"] == user)
        #expect(found.attributes["srvr"] == server)
        #expect(found.attributes["ptcl"] == nil, "no protocol: 0x00000000 has no quoted part")
        #expect(found.keychain == home + "/keychain.db")

        // A second add of the same account is a duplicate: the gem's `system` returns false.
        #expect(try shell("security add-internet-password -a \(Self.rubyShellEscape(user)) -s \(Self.rubyShellEscape(server)) -w other").status == 45)

        #expect(try shell("security delete-internet-password -s \(Self.rubyShellEscape(server))").status == 0)
        #expect(try Self.parseGemOutput(shell("security 2>&1 find-internet-password -g -s \(Self.rubyShellEscape(server))").stdout) == nil)
    }

    @Test func fastlaneReadsNonPrintablePasswordsFromHex() throws {
        #expect(try shell("security add-internet-password -a u -s deliver.u -X c3a96e00").status == 0)
        let found = try #require(try Self.parseGemOutput(shell("security 2>&1 find-internet-password -g -s deliver.u").stdout))
        #expect(found.password == "én\u{0}")
    }
}
