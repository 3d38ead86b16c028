import KeychainSystem

/// security(1), written from the command table: every command's section is its usage and
/// description as `security help` prints them, in the table's order (macOS's page's).
enum ToolManual {
    static var page: ManualPage {
        ManualPage(
            name: "security", section: 1, summary: "command line interface to keychains (Trousseau)",
            synopsis: ["[-hiqv] [-p prompt] [command] [command_options] [command_args]", "--version"],
            sections: [
                ManualPage.Section(
                    "Description",
                    [
                        .paragraph(
                            "A simple command line interface which lets you administer keychains, manipulate keys and certificates, and do most of what the Security API can, from the command line: the commands and output of macOS's security tool, over Trousseau's keychain. Each user's keychain is served by its own securityd(8), which the first command starts when no socket unit has."
                        ),
                        .paragraph(
                            "With no command, and without -i or -p, security prints its usage and the list of commands. A command may be abbreviated to any prefix; the first command in the list below that starts with it runs (so find is find-generic-password)."
                        ),
                    ]),
                ManualPage.Section(
                    "Options",
                    [.entry("-h", "Show the list of commands, or the usage of the commands named after it.")]
                        + SecurityTool.globalOptions.map { ManualPage.Block.entry($0.flag, $0.text) }
                        + [.entry("--version", "Print the version of Trousseau this program belongs to, and exit (not in macOS's tool).")]),
                ManualPage.Section(
                    "Commands",
                    CommandTable.commands.flatMap { command -> [ManualPage.Block] in
                        let usage = command.usage.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
                        var blocks: [ManualPage.Block] = [
                            .subsection(command.name), .paragraph(command.help),
                            .preformatted("security \(command.name) \(usage.first.map(String.init) ?? "")"),
                        ]
                        if usage.count > 1 {
                            let details = usage[1].split(separator: "\n", omittingEmptySubsequences: false)
                            // The usage's own indentation, less what every line shares.
                            let shared = details.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                            let text = details.map { String($0.dropFirst(min(shared, $0.prefix { $0 == " " }.count))) }
                                .joined(separator: "\n").trimmingTrailingNewlines
                            if !text.isEmpty { blocks.append(.preformatted(text)) }
                        }
                        return blocks
                    }),
                ManualPage.Section(
                    "Environment",
                    [
                        .entry("KEYCHAIN_HOME", "The keychain's directory (its database, keybag and device key) instead of the default one."),
                        .entry("XDG_DATA_HOME", "The default keychain is in $XDG_DATA_HOME/trousseau (else ~/.local/share/trousseau)."),
                        .entry(
                            "XDG_RUNTIME_DIR",
                            "securityd's sockets are in $XDG_RUNTIME_DIR/trousseau (else /tmp/trousseau-UID); the default keychain's is default.sock."),
                        .entry("TROUSSEAU_SYSTEM_SOCKET", "The System keychain's socket, instead of /run/trousseau/system.sock."),
                        .entry("TROUSSEAU_DEBUG", "When set, a failed command also prints the daemon's detail (it names keys and types, never values)."),
                    ]),
                ManualPage.Section(
                    "Exit status",
                    [
                        .paragraph(
                            "The command's OSStatus truncated to eight bits, as on macOS: 0 on success; 2 when a command's usage was shown; 1 for an unknown command. With -i, the last command's.")
                    ]),
                ManualPage.Section(
                    "Files",
                    [
                        .entry("~/.local/share/trousseau/", "The user's default keychain (the login keychain)."),
                        .entry("/var/lib/trousseau/system/", "The System keychain, served to every user by root's securityd on /run/trousseau/system.sock."),
                    ]),
                ManualPage.Section("See also", [.paragraph("securityd(8), keychain-access(1), secret-tool(1)")]),
            ])
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.last?.isNewline == true || text.last == " " { text.removeLast() }
        return text
    }
}
