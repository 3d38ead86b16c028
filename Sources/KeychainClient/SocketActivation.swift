import FoundationEssentials
import KeychainModel
internal import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// systemd's socket activation, as a client uses it: when the default keychain's socket
/// has nobody listening and the user units are installed, `systemctl --user start
/// trousseau-securityd.socket` makes systemd listen there (and start securityd on the
/// connection). Without systemd (containers, CI, WSL) the client starts the daemon itself.
enum SocketActivation {
    static let unit = "trousseau-securityd.socket"
    static let systemctl: [String] = ["/usr/bin/systemctl", "/bin/systemctl"]

    /// The directories systemd reads user units from, the installation's among them.
    static func unitDirectories(_ environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { directories.append(config + "/systemd/user") }
        if let home = environment["HOME"], !home.isEmpty {
            directories += [home + "/.config/systemd/user", home + "/.local/share/systemd/user"]
        }
        return directories + ["/etc/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user"]
    }

    /// Creates the default keychain's directory (0700, and any missing parent) when it does
    /// not exist: a securityd that systemd starts runs with the file system read-only but
    /// for that directory (`ProtectSystem=strict`), so it cannot create it itself.
    static func prepareHome(_ paths: KeychainPaths) {
        guard paths.socket.hasSuffix("/" + KeychainPaths.defaultSocketName), access(paths.home, F_OK) != 0 else { return }
        var path = ""
        for component in paths.home.split(separator: "/") {
            path += "/" + component
            if access(path, F_OK) != 0 { mkdir(path, 0o700) }
        }
    }

    /// Starts the socket unit for `paths` when that can help: the default keychain, a user
    /// session bus for systemctl to reach, and the unit installed. True when systemctl
    /// succeeded.
    static func start(_ paths: KeychainPaths, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard paths.socket.hasSuffix("/" + KeychainPaths.defaultSocketName),
            let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, access(runtime + "/systemd", F_OK) == 0,
            unitDirectories(environment).contains(where: { access($0 + "/" + unit, R_OK) == 0 }),
            let systemctl = Self.systemctl.first(where: { access($0, X_OK) == 0 })
        else { return false }
        guard
            let child = try? Spawn.process(
                systemctl, arguments: ["--user", "start", unit], environment: environment, descriptors: .null, newSession: false,
                failure: OSStatusCode.notAvailable)
        else { return false }
        return SystemCall.wait(child).map(SystemCall.exitCode) == 0
    }
}
