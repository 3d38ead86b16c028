import KeychainSystem

/// What securityd takes, for `--help` and securityd(8) (`--generate-manual`): main.swift
/// reads exactly these.
enum DaemonManual {
    static let synopsis = [
        "[--home DIR] [--secret-service] [--print-socket]",
        "--system [--home DIR] [--socket PATH]",
        "--version | --help",
    ]

    static let options: [(flag: String, text: String)] = [
        ("--home DIR", "Serve the keychain in DIR instead of the one the environment names (what a client passes when it starts the daemon)."),
        (
            "--secret-service",
            "Also serve the freedesktop Secret Service (org.freedesktop.secrets) on the session bus of DBUS_SESSION_BUS_ADDRESS; never idle while the bus lasts."
        ),
        (
            "--system",
            "Serve the System keychain (/var/lib/trousseau/system, on /run/trousseau/system.sock, open to every user): run by root from trousseau-system.service."
        ),
        ("--socket PATH", "With --system: listen on PATH instead."),
        ("--print-socket", "Print the socket a client of this keychain connects to, and exit (for the systemd socket unit)."),
        ("--version", "Print the version of Trousseau this program belongs to, and exit."),
        ("--help", "Print this usage, and exit."),
    ]

    static let environment: [(name: String, text: String)] = [
        ("KEYCHAIN_HOME", "The keychain's directory; else $XDG_DATA_HOME/trousseau, else ~/.local/share/trousseau."),
        ("XDG_RUNTIME_DIR", "The socket's directory is $XDG_RUNTIME_DIR/trousseau (else /tmp/trousseau-UID)."),
        ("LISTEN_FDS, LISTEN_PID", "A socket passed by systemd (socket activation, sd_listen_fds(3)) is served instead of one of its own."),
        ("JOURNAL_STREAM", "When it names standard error, each line starts with its syslog priority for the journal (sd-daemon(3))."),
        (
            "TROUSSEAU_TPM",
            "Where a new keychain's device key goes: auto (the default: the TPM 2.0 at /dev/tpmrm0 when this user may open it, else software), off (software), or a TCTI such as swtpm:path=SOCKET. A keychain keeps the backend it was made with; a TCTI given here reaches its TPM another way."
        ),
        ("TROUSSEAU_SECURITYD_IDLE_SECONDS", "Exit after this long without a client (0: never; default 600)."),
        ("TROUSSEAU_SECURITYD_LOG", "A file for the diagnostics instead of standard error (clients start the daemon with standard error on /dev/null)."),
        (
            "TROUSSEAU_SYNC_INTERVAL_SECONDS",
            "While sync is on, how often a round runs besides those changes and the server's hints start (default 60; 0: only security sync now)."
        ),
        (
            "TROUSSEAU_SYNC_STALL_SECONDS",
            "How long the sync server's feed may stay short of this device's own write before security sync status warns (default 3600)."
        ),
    ]

    /// Why `arguments` are not what securityd takes (an option not in ``options``, or one
    /// without its value), or nil. `--generate-manual`, alone, writes the page (scripts/install).
    static func problem(with arguments: [String]) -> String? {
        if arguments == ["--generate-manual"] { return nil }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard let option = options.first(where: { $0.flag.split(separator: " ").first.map(String.init) == argument }) else {
                return "unknown option \(argument)"
            }
            if option.flag.contains(" "), rest.popFirst() == nil { return "\(argument) needs a value" }
        }
        return nil
    }

    static var usage: String {
        "usage:\n" + synopsis.map { "  securityd \($0)\n" }.joined() + "\n"
            + options.map { "  \($0.flag.padding(18))\($0.text)\n" }.joined()
    }

    static var page: ManualPage {
        ManualPage(
            name: "securityd", section: 8, summary: "the keychain's daemon (Trousseau)", synopsis: synopsis,
            sections: [
                ManualPage.Section(
                    "Description",
                    [
                        .paragraph(
                            "securityd owns one keychain: its SQLite database, its keybag and the enclave process (trousseau-enclave) that holds its class keys. It answers the requests of security(1), the Security API and Keychain Access on a Unix socket only its user can reach, deciding from each caller's code signature (its application identifier and keychain access groups) which items it may touch."
                        ),
                        .paragraph(
                            "Clients start it on demand, or systemd does through trousseau-securityd.socket; a second securityd for the same keychain exits at once. With --secret-service it is also the desktop's Secret Service, for secret-tool(1), libsecret and python keyring."
                        ),
                    ]),
                ManualPage.Section("Options", options.map { ManualPage.Block.entry($0.flag, $0.text) }),
                ManualPage.Section("Environment", environment.map { ManualPage.Block.entry($0.name, $0.text) }),
                ManualPage.Section(
                    "Diagnostics",
                    [
                        .paragraph(
                            "One line per event on standard error, which under systemd is the journal: refused requests and callers, a signature that cannot vouch for its process and data that fails its check are warnings (journalctl -p warning); starting and stopping are notices. Lines name pids, executables and OSStatus codes, never an item's attributes or data."
                        )
                    ]),
                ManualPage.Section(
                    "Signals",
                    [.paragraph("SIGTERM and SIGINT stop it after the requests in progress; the keychain is consistent at every moment, so SIGKILL loses nothing committed.")]),
                ManualPage.Section(
                    "Files",
                    [
                        .entry("~/.local/share/trousseau/", "The user's default keychain: keychain.db, the keybag, the device key."),
                        .entry("$XDG_RUNTIME_DIR/trousseau/default.sock", "Its socket."),
                        .entry("/var/lib/trousseau/system/", "The System keychain."),
                        .entry("/etc/trousseau/trust-settings", "The administrator's trust settings (root's, not writable by others)."),
                    ]),
                ManualPage.Section("See also", [.paragraph("security(1), keychain-access(1), systemd.socket(5), journalctl(1)")]),
            ])
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count < width ? self + String(repeating: " ", count: width - count) : self + "  "
    }
}
