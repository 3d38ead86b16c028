import Foundation
import KeychainModel
import KeychainTestSupport
import Testing

/// securityd started by socket activation, as the user units start it: the socket held by
/// another process and passed as descriptor 3 on the first connection; the daemon exits
/// when idle and leaves the socket to its owner.
@Suite final class SocketActivationTests {
    static let activate = "/usr/bin/systemd-socket-activate"
    static var userSystemd: Bool {
        guard let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] else { return false }
        return FileManager.default.fileExists(atPath: runtime + "/systemd/private")
    }

    let home: String
    let paths: KeychainPaths
    init() throws {
        home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain"
        paths = KeychainPaths(home: home)
    }
    deinit { DaemonControl.stop(home: home) }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": home])
    }

    /// With `systemd-socket-activate` (systemd's tool for exactly this; it needs no systemd
    /// running) holding the socket: the first client's connection starts securityd on it,
    /// which serves, then exits when idle without removing the socket it did not make.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: activate), "systemd-socket-activate is not installed (package systemd)"))
    func theFirstConnectionStartsTheDaemonOnTheSocketItWasGiven() throws {
        try FileManager.default.createDirectory(atPath: paths.socketDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let listener = Process()
        listener.executableURL = URL(fileURLWithPath: Self.activate)
        listener.arguments = [
            "-l", paths.socket, "-E", "TROUSSEAU_SECURITYD_IDLE_SECONDS=3", "-E", "TROUSSEAU_UNSAFE_FAST_KDF=1", "-E", "TROUSSEAU_SECURITYD_LOG=\(home).log",
            CommandRunner.productsDirectory.appendingPathComponent("securityd").path, "--home", home,
        ]
        listener.standardOutput = FileHandle.nullDevice
        listener.standardError = FileHandle.nullDevice
        try listener.run()
        defer { if listener.isRunning { listener.terminate() } }
        while !FileManager.default.fileExists(atPath: paths.socket) { usleep(1_000) }
        #expect(DaemonControl.pid(home: home) == nil, "nothing runs before the first connection")

        // The daemon is the process that held the socket (systemd-socket-activate execs it in
        // place: the pid its lock names is the listener's), not one the client started.
        let added = try security("add-generic-password", "-a", "a", "-s", "activated", "-w", "through the socket")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(DaemonControl.pid(home: home) == listener.processIdentifier)
        let log = (try? String(contentsOfFile: home + ".log", encoding: .utf8)) ?? ""
        #expect(log.contains("serving \(home) on \(paths.socket)"), "\(log)")
        #expect(try security("find-generic-password", "-s", "activated", "-w").stdout == "through the socket\n")

        // Idle for a few seconds: it exits, and the socket stays for its owner to listen on.
        listener.waitUntilExit()
        #expect(((try? String(contentsOfFile: home + ".log", encoding: .utf8)) ?? "").contains("stopping: idle"))
        #expect(listener.terminationStatus == 0)
        #expect(FileManager.default.fileExists(atPath: paths.socket), "securityd removes only a socket it made")
    }

    /// The installed units under the user's systemd: skipped where no user systemd runs
    /// (containers, CI), which the result says.
    @Test(.enabled(if: userSystemd, "no systemd user instance here ($XDG_RUNTIME_DIR/systemd/private is absent): the units were not run under systemd"))
    func theUserUnitsStartTheDaemonAndStartItAgainAfterItExits() throws {
        let units = try TemporaryKeychain.makeTemporaryDirectory()
        let name = "trousseau-test-\(getpid())"
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for suffix in ["socket", "service"] {
            var text = try String(contentsOf: root.appendingPathComponent("packaging/systemd/trousseau-securityd.\(suffix)"), encoding: .utf8)
            text = text.replacingOccurrences(of: "%t/trousseau/default.sock", with: paths.socket)
                .replacingOccurrences(of: "@LIBEXEC@/securityd", with: CommandRunner.productsDirectory.appendingPathComponent("securityd").path + " --home " + home)
                .replacingOccurrences(of: "TROUSSEAU_SECURITYD_IDLE_SECONDS=600", with: "TROUSSEAU_SECURITYD_IDLE_SECONDS=1")
                .replacingOccurrences(of: "trousseau-securityd.socket", with: name + ".socket")
                .replacingOccurrences(of: "ReadWritePaths=-%h/.local/share/trousseau", with: "ReadWritePaths=" + home)
            try text.write(toFile: units + "/\(name).\(suffix)", atomically: true, encoding: .utf8)
        }
        func systemctl(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run(executable: "/usr/bin/systemctl", ["--user"] + arguments, environment: [:])
        }
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(try systemctl("link", units + "/\(name).socket", units + "/\(name).service").status == 0)
        defer {
            _ = try? systemctl("stop", name + ".socket", name + ".service")
            _ = try? systemctl("disable", name + ".socket", name + ".service")
        }
        #expect(try systemctl("start", name + ".socket").status == 0)
        #expect(try security("add-generic-password", "-a", "a", "-s", "units", "-w", "under systemd").status == 0)
        let first = try #require(DaemonControl.pid(home: home))
        while DaemonControl.isRunning(first) { usleep(10_000) }  // idle exit
        #expect(try security("find-generic-password", "-s", "units", "-w").stdout == "under systemd\n", "started again")
        #expect(DaemonControl.pid(home: home) != first)
    }
}
