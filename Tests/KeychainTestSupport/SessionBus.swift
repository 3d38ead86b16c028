// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private session bus (a real dbus-daemon) whose one activatable service is
/// `org.freedesktop.secrets`: securityd `--secret-service` for a temporary keychain, started
/// by the bus on the first client's call, as the activation file installs it.
public final class SessionBus: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let keychain: DaemonKeychain
    public let address: String
    private let busDaemon: pid_t

    public var directory: String { keychain.directory }

    /// - Parameters:
    ///   - keychain: the keychain of an earlier session (a new one when nil).
    ///   - daemonEnvironment: more of the bus's environment (which activated services get).
    public init(keychain: DaemonKeychain? = nil, daemonEnvironment: [String: String] = [:]) throws {
        self.keychain = try keychain ?? DaemonKeychain()
        let directory = self.keychain.directory
        let socket = directory + "/bus-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory + "/services", withIntermediateDirectories: true)
        let configuration = """
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(directory)/services</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/session.conf", atomically: true, encoding: .utf8)
        let activation = """
            [D-BUS Service]
            Name=org.freedesktop.secrets
            Exec=\(DaemonKeychain.daemonExecutable) --secret-service --home \(self.keychain.home)

            """
        try activation.write(toFile: directory + "/services/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        address = "unix:path=" + socket
        // Activated services get the bus's environment: the test variables, the daemon's log,
        // and this process's XDG_RUNTIME_DIR (so `security` finds the same daemon's socket).
        var environment = self.keychain.environment
        environment["PATH"] = "/usr/bin:/bin"
        environment.merge(daemonEnvironment) { _, new in new }
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] { environment["XDG_RUNTIME_DIR"] = runtime }
        // Started by Python with every other descriptor closed (dbus-daemon keeps what it
        // inherits; our output pipe held open would never reach its end), in a session of its own.
        let started = try CommandRunner.run(
            executable: "/usr/bin/python3",
            [
                "-c",
                "import subprocess, sys; print(subprocess.Popen(['dbus-daemon', '--nofork', '--nopidfile', '--config-file=' + sys.argv[1]], "
                    + "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True).pid)",
                directory + "/session.conf",
            ],
            environment: environment, clearing: true)
        busDaemon = try #require(pid_t(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(started.stderr)")
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
    }

    deinit {
        stopBus()
    }

    /// Ends the bus (as a session's end does).
    public func stopBus() {
        kill(busDaemon, SIGKILL)  // it inherits our blocked signals, SIGTERM among them
        var status: Int32 = 0
        _ = waitpid(busDaemon, &status, WNOHANG)
    }

    /// The environment of a client on this bus.
    public var clientEnvironment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8"]
    }

    /// Runs Debian's `secret-tool`.
    public func secretTool(_ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run(executable: "/usr/bin/secret-tool", arguments, environment: clientEnvironment, input: input, clearing: true)
    }

    /// bwrap's command line for a Flatpak app `appID`: its own root holding /usr, /etc, this
    /// bus's directory and a `/.flatpak-info` naming it, in new user and pid namespaces.
    public func flatpakSandbox(_ appID: String) throws -> [String] {
        let info = directory + "/flatpak-info-" + appID
        try "[Application]\nname=\(appID)\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n\n[Instance]\ninstance-id=1\n"
            .write(toFile: info, atomically: true, encoding: .utf8)
        return [
            "/usr/bin/bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
            "--bind", directory, directory, "--ro-bind", info, "/.flatpak-info", "--unshare-user", "--unshare-pid", "--",
        ]
    }

    /// Runs the `security` tool against the same keychain (over securityd's socket).
    public func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
    }
}
#endif
