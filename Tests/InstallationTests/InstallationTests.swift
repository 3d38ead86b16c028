import Foundation
import KeychainTestSupport
import Testing

/// Trousseau installed as a user would install it (`scripts/install --prefix`), used by a
/// program of another package that only depends on `Security`, with no variable of ours in
/// its environment: it finds the installed daemon by itself. Then an upgrade in place, a
/// half-installed tree, two users, and `--uninstall`.
///
/// Slow: a release build of the three programs (cached in `.build-install`) and a debug
/// build of the other package.
@Suite(.serialized) final class InstallationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let directory: String
    let prefix: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        prefix = directory + "/prefix"
    }

    deinit {
        for home in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where home.hasPrefix("home") {
            DaemonControl.stop(home: directory + "/" + home + "/.local/share/trousseau")
        }
        try? FileManagerLite.removeTree(directory)
    }

    /// Runs `executable` with `environment` alone — and TROUSSEAU_TPM=off, so that a keychain
    /// made as root never lands in the machine's TPM (whose lockout counter is everyone's) —
    /// on a thread of its own (``onThread(_:)``), not the cooperative pool: this suite's builds
    /// take minutes.
    @discardableResult
    func run(_ executable: String, _ arguments: [String], environment: [String: String], in workingDirectory: String? = nil) async throws -> CommandResult {
        let environment = Self.environment(environment)
        return try await onThread { try CommandRunner.run(executable: executable, arguments, environment: environment, clearing: true, in: workingDirectory) }
    }

    /// The same, on this thread: for a clean-up of a few quick commands in a `defer`.
    func runNow(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> CommandResult {
        try CommandRunner.run(executable: executable, arguments, environment: Self.environment(environment), clearing: true)
    }

    static func environment(_ environment: [String: String]) -> [String: String] {
        ["TROUSSEAU_TPM": "off"].merging(environment) { $1 }
    }

    func install(_ extra: [String] = []) async throws -> CommandResult {
        try await run("/bin/bash", [Self.repository.path + "/scripts/install", "--prefix", prefix] + extra, environment: CommandRunner.hostEnvironment)
    }

    /// A user's environment: a home of its own, the prefix's bin on PATH, nothing else.
    func user(_ name: String) throws -> [String: String] {
        let home = directory + "/home-" + name
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return ["HOME": home, "PATH": prefix + "/bin:/usr/bin:/bin"]
    }

    /// A package of its own that depends on Trousseau's `Security` and stores and reads a
    /// password with SecItemAdd and SecItemCopyMatching.
    func buildConsumer() async throws -> String {
        let package = directory + "/consumer"
        try FileManager.default.createDirectory(atPath: package + "/Sources/consumer", withIntermediateDirectories: true)
        try """
        // swift-tools-version:6.1
        import PackageDescription
        let package = Package(
            name: "Consumer",
            dependencies: [.package(name: "Trousseau", path: "\(Self.repository.path)")],
            targets: [.executableTarget(name: "consumer", dependencies: [.product(name: "Security", package: "Trousseau")])]
        )
        """.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
        try """
        import Foundation
        import Security

        let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "consumer.example", kSecAttrAccount as String: "alice"]
        if CommandLine.arguments.contains("add") {
            let status = SecItemAdd(base.merging([kSecValueData as String: Data("from another package".utf8)]) { $1 } as CFDictionary, nil)
            guard status == errSecSuccess else { print("SecItemAdd", status); exit(1) }
        }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(base.merging([kSecReturnData as String: true]) { $1 } as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else { print("SecItemCopyMatching", status); exit(2) }
        print(String(decoding: data, as: UTF8.self))
        """.write(toFile: package + "/Sources/consumer/main.swift", atomically: true, encoding: .utf8)
        let built = try await run("/usr/bin/env", ["swift", "build", "--scratch-path", package + "/.build"], environment: CommandRunner.hostEnvironment, in: package)
        try #require(built.status == 0, "\(built.stdout)\(built.stderr)")
        return package + "/.build/debug/consumer"
    }

    @Test func anInstalledTrousseauServesAnotherPackagesProgram() async throws {
        let installed = try await install()
        try #require(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        let manifest = try String(contentsOfFile: prefix + "/share/trousseau/install-manifest", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(Set(manifest).isSuperset(of: ["bin/security", "libexec/trousseau/securityd", "libexec/trousseau/trousseau-enclave", "libexec/trousseau/trousseau-sync-agent",
            "lib/systemd/user/trousseau-securityd.socket", "lib/systemd/user/trousseau-securityd.service", "bin/keychain-access",
            "share/applications/trousseau-keychain-access.desktop", "share/icons/hicolor/scalable/apps/trousseau-keychain-access.svg"]))
        // Manual pages, which man finds through PATH (man-db's manpath), and completions where each shell looks.
        #expect(Set(manifest).isSuperset(of: ["share/man/man1/security.1.gz", "share/man/man1/keychain-access.1.gz", "share/man/man8/securityd.8.gz",
            "share/bash-completion/completions/security", "share/zsh/site-functions/_security", "share/fish/vendor_completions.d/security.fish"]))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let found = try await run("/usr/bin/man", ["-w", "security"], environment: ["PATH": prefix + "/bin:/usr/bin:/bin"])
            #expect(found.stdout == prefix + "/share/man/man1/security.1.gz\n", "\(found.stdout)\(found.stderr)")
        }
        // The window is in the desktop's menu, naming the installed program.
        let entry = try String(contentsOfFile: prefix + "/share/applications/trousseau-keychain-access.desktop", encoding: .utf8)
        #expect(entry.contains("\nExec=\(prefix)/bin/keychain-access\n") && entry.contains("\nIcon=trousseau-keychain-access\n"))
        // The installed programs are release builds: no test hook, and securityd without the keybag.
        for program in ["bin/security", "bin/keychain-access", "libexec/trousseau/securityd", "libexec/trousseau/trousseau-enclave", "libexec/trousseau/trousseau-sync-agent"] {
            #expect(try BinaryMarkers.found(BinaryMarkers.testHooks, in: prefix + "/" + program) == [], "\(program) carries test hooks")
        }
        #expect(try BinaryMarkers.found(BinaryMarkers.keybag, in: prefix + "/libexec/trousseau/securityd") == [])
        // Both say the version the installation (and a package made from this checkout) carries.
        let version = try await run("/bin/bash", [Self.repository.path + "/scripts/version"], environment: CommandRunner.hostEnvironment).stdout
        #expect(version.hasPrefix("0.") && version.contains("+g"), "\(version)")
        #expect(try await run(prefix + "/bin/security", ["--version"], environment: [:]).stdout == "security (Trousseau) " + version)
        #expect(try await run(prefix + "/libexec/trousseau/securityd", ["--version"], environment: [:]).stdout == "securityd (Trousseau) " + version)
        #expect(try BinaryMarkers.found(BinaryMarkers.keybag, in: prefix + "/libexec/trousseau/trousseau-enclave") == BinaryMarkers.keybag)
        #expect(try BinaryMarkers.found(BinaryMarkers.network, in: prefix + "/libexec/trousseau/securityd") == [])
        let service = try String(contentsOfFile: prefix + "/lib/systemd/user/trousseau-securityd.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(prefix)/libexec/trousseau/securityd\n"))
        // A user's securityd may sync: its sandbox lets its child the sync agent reach
        // trousseau-syncd (it had only AF_UNIX, and every round failed under systemd).
        #expect(service.contains("\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n"))
        // The Secret Service: D-Bus activation names the installed daemon, and so does its unit.
        let activation = try String(contentsOfFile: prefix + "/share/dbus-1/services/org.freedesktop.secrets.service", encoding: .utf8)
        #expect(activation.contains("Name=org.freedesktop.secrets\nExec=\(prefix)/libexec/trousseau/securityd --secret-service\n"))
        let secretUnit = try String(contentsOfFile: prefix + "/lib/systemd/user/trousseau-secret-service.service", encoding: .utf8)
        #expect(secretUnit.contains("BusName=org.freedesktop.secrets\nExecStart=\(prefix)/libexec/trousseau/securityd --secret-service\n"))

        // Another package's program, nothing of ours in its environment.
        let consumer = try await buildConsumer()
        let alice = try user("alice")
        let first = try await run(consumer, ["add"], environment: alice)
        #expect(first.status == 0 && first.stdout == "from another package\n", "\(first.stdout)\(first.stderr)")
        let home = alice["HOME"]! + "/.local/share/trousseau"
        let daemon = try #require(DaemonControl.pid(home: home), "a daemon serves the default keychain")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon)/exe") == prefix + "/libexec/trousseau/securityd")
        #expect(try await run(prefix + "/bin/security", ["find-generic-password", "-s", "consumer.example", "-w"], environment: alice).stdout == "from another package\n")

        // An upgrade in place keeps the keychain.
        DaemonControl.stop(home: home)
        #expect(try await install().status == 0)
        #expect(try await run(consumer, [], environment: alice).stdout == "from another package\n")

        // Half installed: the missing file is named, at once.
        DaemonControl.stop(home: home)
        try FileManager.default.removeItem(atPath: prefix + "/libexec/trousseau/securityd")
        let half = try await run(prefix + "/bin/security", ["find-generic-password", "-s", "consumer.example", "-w"], environment: alice)
        #expect(half.status != 0)
        #expect(half.stderr.contains("\(prefix)/libexec/trousseau/securityd"), "\(half.stderr)")
        #expect(try await run(consumer, [], environment: alice).stdout == "SecItemCopyMatching -25291\n")

        // Uninstalled: every file of the manifest goes, the keychain stays.
        let removed = try await install(["--uninstall"])
        #expect(removed.status == 0, "\(removed.stderr)")
        for file in manifest { #expect(!FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) left behind") }
        #expect(!FileManager.default.fileExists(atPath: prefix + "/libexec"))
        #expect(FileManager.default.fileExists(atPath: home + "/keychain.db"), "the keychain is never removed")
    }

    /// Two users of one machine: each gets a daemon and a socket of their own, and neither
    /// reaches the other's (root only: the test takes two uids with setpriv).
    @Test(.enabled(if: getuid() == 0, "needs root: setpriv to two other uids (the other tests cover one user)"))
    func twoUsersCannotReachEachOthersDaemon() async throws {
        // Other users reach the installation as they would /usr/local.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        #expect(try await install().status == 0)
        var environments: [[String: String]] = []
        for (name, uid) in [("ann", 40_001), ("bob", 40_002)] {
            let environment = try user(name)
            try FileManager.default.setAttributes([.ownerAccountID: uid, .groupOwnerAccountID: uid, .posixPermissions: 0o700], ofItemAtPath: environment["HOME"]!)
            environments.append(environment)
            let stored = try await run(
                "/usr/bin/setpriv", ["--reuid", "\(uid)", "--regid", "\(uid)", "--clear-groups", prefix + "/bin/security", "add-generic-password", "-a", name, "-s", "two-users", "-w", "secret of " + name],
                environment: environment)
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        // bob cannot connect to ann's socket, nor open her keychain with a daemon of his own.
        let annSocket = "/tmp/trousseau-40001/default.sock"
        #expect(FileManager.default.fileExists(atPath: annSocket))
        let connect = try await run(
            "/usr/bin/setpriv",
            ["--reuid", "40002", "--regid", "40002", "--clear-groups", "/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_UNIX).connect('\(annSocket)')"],
            environment: environments[1])
        #expect(connect.status != 0 && connect.stderr.contains("PermissionError"), "\(connect.stderr)")
        var intruder = environments[1]
        intruder["KEYCHAIN_HOME"] = environments[0]["HOME"]! + "/.local/share/trousseau"
        let read = try await run(
            "/usr/bin/setpriv", ["--reuid", "40002", "--regid", "40002", "--clear-groups", prefix + "/bin/security", "find-generic-password", "-a", "ann", "-w"],
            environment: intruder)
        #expect(read.status != 0 && !read.stdout.contains("secret of ann"))
        let own = try await run(
            "/usr/bin/setpriv", ["--reuid", "40002", "--regid", "40002", "--clear-groups", prefix + "/bin/security", "find-generic-password", "-a", "bob", "-w"],
            environment: environments[1])
        #expect(own.stdout == "secret of bob\n")
        for (uid, environment) in zip([40_001, 40_002], environments) {
            _ = try? await run("/usr/bin/pkill", ["-U", "\(uid)", "-f", "securityd"], environment: environment)
        }
    }

    /// `scripts/demo` installs what building `security`, securityd and the enclave needs —
    /// no browser, keyring daemon, PAM tool or database server, which only the tests use.
    @Test func theDemoInstallsOnlyWhatBuildingNeeds() async throws {
        let deps = Self.repository.path + "/scripts/install-deps"
        let build = try await run("/bin/bash", [deps, "--build", "--list"], environment: CommandRunner.hostEnvironment)
        #expect(build.status == 0 && build.stdout == "libsqlite3-dev\nlibssl-dev\nlibsystemd-dev\nlibsodium-dev\nlibtss2-dev\n", "\(build.stdout)\(build.stderr)")
        let everything = try await run("/bin/bash", [deps, "--list"], environment: CommandRunner.hostEnvironment).stdout.split(separator: "\n").map(String.init)
        let testsOnly = ["chromium", "gnome-keyring", "pamtester", "libpam0g-dev", "bubblewrap", "postgresql-15", "libsecret-tools"]
        #expect(testsOnly.allSatisfy(everything.contains) && build.stdout.split(separator: "\n").allSatisfy { everything.contains(String($0)) }, "\(everything)")
        let demo = try String(contentsOfFile: Self.repository.path + "/scripts/demo", encoding: .utf8)
        #expect(demo.contains("\nscripts/install-deps --build\n"))
        #expect(try await run("/bin/bash", [deps, "--bogus"], environment: CommandRunner.hostEnvironment).status == 64)
    }

    /// The Debian package, installed with apt on this machine, used by a new user, removed:
    /// nothing of it left (root, with dpkg and apt).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/apt-get"), "needs root and apt"))
    func theDebianPackageInstallsServesANewUserAndRemovesCleanly() async throws {
        // A package removed but not purged ("config-files", left by an earlier run) may be
        // replaced; an installed one belongs to someone and is not touched.
        let status = try await run("/usr/bin/dpkg-query", ["-W", "-f=${db:Status-Status}", "trousseau"], environment: CommandRunner.hostEnvironment)
        try #require(status.stdout != "installed", "a trousseau package is installed already; not touching it")
        let built = try await run("/bin/bash", [Self.repository.path + "/scripts/package-deb", "--out", directory + "/deb"], environment: CommandRunner.hostEnvironment)
        try #require(built.status == 0, "\(built.stderr)")
        let package = built.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let packaged = try await run("/usr/bin/dpkg-deb", ["-f", package, "Version"], environment: CommandRunner.hostEnvironment).stdout
        let control = try await run("/usr/bin/dpkg-deb", ["-f", package, "Depends"], environment: CommandRunner.hostEnvironment)
        #expect(control.stdout.contains("libsqlite3-0") && control.stdout.contains("libssl3"), "\(control.stdout)")
        // Debian's conventions: no error or warning from lintian (its one override says why),
        // a manual page for each program, completions where each shell looks.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") {
            let lintian = try await run("/usr/bin/lintian", [package], environment: CommandRunner.hostEnvironment)
            #expect(lintian.status == 0 && lintian.stdout.isEmpty, "lintian: \(lintian.stdout)\(lintian.stderr)")
        }
        let contents = try await run("/usr/bin/dpkg-deb", ["-c", package], environment: CommandRunner.hostEnvironment).stdout
        for file in [
            "usr/share/man/man1/security.1.gz", "usr/share/man/man1/keychain-access.1.gz", "usr/share/man/man8/securityd.8.gz",
            "usr/share/bash-completion/completions/security", "usr/share/zsh/vendor-completions/_security",
            "usr/share/fish/vendor_completions.d/security.fish", "usr/share/doc/trousseau/changelog.gz", "usr/share/doc/trousseau/copyright",
        ] {
            #expect(contents.contains("./" + file + "\n"), "\(file) is in the package")
        }

        var apt = CommandRunner.hostEnvironment
        apt["DEBIAN_FRONTEND"] = "noninteractive"
        let installed = try await run("/usr/bin/apt-get", ["install", "-y", "-qq", package], environment: apt)
        try #require(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        #expect(try await run("/usr/bin/security", ["--version"], environment: [:]).stdout == "security (Trousseau) " + packaged, "the package's own version")
        let user = "trdeb\(getpid() % 100_000)"
        defer {
            _ = try? runNow("/usr/bin/pkill", ["-u", user], environment: apt)
            usleep(300_000)
            _ = try? runNow("/usr/sbin/userdel", ["-rf", user], environment: apt)
            _ = try? runNow("/usr/bin/apt-get", ["purge", "-y", "-qq", "trousseau"], environment: apt)
        }
        let files = try await run("/usr/bin/dpkg", ["-L", "trousseau"], environment: apt).stdout.split(separator: "\n").map(String.init)
        #expect(files.contains("/usr/bin/security") && files.contains("/usr/libexec/trousseau/securityd"))
        #expect(FileManager.default.fileExists(atPath: "/etc/systemd/user/sockets.target.wants/trousseau-securityd.socket"), "enabled for new sessions")
        #expect(FileManager.default.fileExists(atPath: "/etc/systemd/system/sockets.target.wants/trousseau-system.socket"), "the System keychain's socket is enabled")
        #expect(files.contains("/usr/lib/systemd/system/trousseau-system.service"))
        #expect(files.contains("/usr/share/dbus-1/services/org.freedesktop.secrets.service"))
        let diversions = try await run("/usr/bin/dpkg-divert", ["--list", "/usr/share/dbus-1/services/org.freedesktop.secrets.service"], environment: apt)
        #expect(diversions.stdout.contains("by trousseau"), "gnome-keyring's activation file is diverted: \(diversions.stdout)")

        // A fresh user, nothing but a login shell's environment.
        #expect(try await run("/usr/sbin/useradd", ["-m", "-s", "/bin/sh", user], environment: apt).status == 0)
        let session = try await run(
            "/bin/su", ["-", user, "-c", "security add-generic-password -a me -s package -w from-the-package && security find-generic-password -a me -s package -w"],
            environment: apt)
        #expect(session.stdout == "from-the-package\n", "\(session.stdout)\(session.stderr)")
        _ = try await run("/usr/bin/pkill", ["-u", user], environment: apt)
        usleep(300_000)

        let removed = try await run("/usr/bin/apt-get", ["purge", "-y", "-qq", "trousseau"], environment: apt)
        #expect(removed.status == 0, "\(removed.stderr)")
        let purged = try await run("/usr/bin/dpkg-query", ["-W", "-f=${db:Status-Status}", "trousseau"], environment: apt)
        #expect(purged.stdout.isEmpty || purged.stdout == "not-installed", "purged, not left as \(purged.stdout)")
        #expect(!FileManager.default.fileExists(atPath: "/var/lib/dpkg/info/trousseau.list"))
        var isDirectory: ObjCBool = false
        // gnome-keyring's activation file, when it is installed, is back at the path ours had.
        let activation = "/usr/share/dbus-1/services/org.freedesktop.secrets.service"
        let left = files.filter { path in
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
            return path != activation || (try? String(contentsOfFile: path, encoding: .utf8))?.contains("securityd") == true
        }
        #expect(left.isEmpty, "left behind: \(left)")
        let undiverted = try await run("/usr/bin/dpkg-divert", ["--list", "/usr/share/dbus-1/services/org.freedesktop.secrets.service"], environment: apt)
        #expect(!undiverted.stdout.contains("trousseau"), "the diversion is gone: \(undiverted.stdout)")
        #expect(!FileManager.default.fileExists(atPath: "/usr/libexec/trousseau"))
        #expect(!FileManager.default.fileExists(atPath: "/etc/systemd/user/sockets.target.wants/trousseau-securityd.socket"))
        #expect(!FileManager.default.fileExists(atPath: "/etc/systemd/system/sockets.target.wants/trousseau-system.socket"))
    }
}
