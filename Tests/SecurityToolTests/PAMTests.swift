import Foundation
import KeychainTestSupport
import Testing

/// The PAM module (pam/pam_trousseau.c) under `pamtester`, as login and passwd would drive
/// it: a test user whose keychain password is their login password, a PAM service in
/// /etc/pam.d with the module before pam_permit. Root only (a user and a PAM service are
/// made for the test and removed after).
@Suite(.serialized) final class PAMTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let canRun = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/pamtester")
        && FileManager.default.fileExists(atPath: "/usr/include/security/pam_modules.h")

    let directory: String
    let user = "trpam\(getpid() % 100_000)"
    let service = "trousseau-test-\(getpid())"
    let home: String
    /// The tool, with securityd and the enclave beside it, copied where the test user can
    /// run them: the build directory may be in a checkout only root can enter (a clone in a
    /// `mktemp -d` directory, 0700).
    let security: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        home = directory + "/home"
        security = directory + "/bin/security"
    }

    /// Copies the programs the test user runs into `directory/bin` (0755).
    func installPrograms() throws {
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        for program in ["securityd", "trousseau-enclave", "security"] {
            try CommandRunner.copyExecutable(CommandRunner.productsDirectory.appendingPathComponent(program).path, to: directory + "/bin/" + program)
        }
    }

    deinit {
        DaemonControl.stop(home: home + "/.local/share/trousseau")
        _ = try? CommandRunner.run(executable: "/usr/sbin/userdel", ["-f", user], environment: [:], clearing: true)
        try? FileManager.default.removeItem(atPath: "/etc/pam.d/" + service)
        try? FileManagerLite.removeTree(directory)
    }

    func run(_ executable: String, _ arguments: [String], input: String = "") throws -> CommandResult {
        try CommandRunner.run(executable: executable, arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/bin"], input: input, clearing: true)
    }

    /// `security` as the test user, in their environment (no runtime directory: the daemon
    /// listens under /tmp/trousseau-UID, where the module looks when there is none).
    func asUser(_ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run(
            executable: "/usr/bin/setpriv", ["--reuid", user, "--regid", user, "--init-groups", security] + arguments,
            environment: ["HOME": home, "PATH": "/usr/bin:/bin"], input: input, clearing: true)
    }

    func pamtester(_ operation: String, input: String) throws -> CommandResult {
        try run("/usr/bin/pamtester", [service, user, operation], input: input)
    }

    @Test(.enabled(if: canRun, "needs root, pamtester and libpam's headers (scripts/install-deps installs them)"))
    func loginUnlocksTheKeychainAndPasswdKeepsItInStep() throws {
        let module = directory + "/pam_trousseau.so"
        let built = try run("/usr/bin/cc", ["-shared", "-fPIC", "-Wall", "-Werror", "-O2", "-o", module, Self.repository.path + "/pam/pam_trousseau.c", "-lpam"])
        try #require(built.status == 0, "\(built.stderr)")
        // The user, their home, and the service: the module first, then pam_permit (which
        // stands for pam_unix here: the test user has no login password of the system's).
        try #require(try run("/usr/sbin/useradd", ["-M", "-d", home, "-s", "/usr/sbin/nologin", user]).status == 0)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        try installPrograms()
        #expect(try run("/bin/chown", [user + ":", home]).status == 0)
        try """
        auth     optional  \(module) security=\(security)
        auth     required  pam_permit.so
        password optional  \(module) security=\(security)
        password required  pam_permit.so
        """.write(toFile: "/etc/pam.d/" + service, atomically: true, encoding: .utf8)

        #expect(try asUser("set-keychain-password", input: "login-pw\nlogin-pw\n").status == 0)
        #expect(try asUser("add-generic-password", "-a", "a", "-s", "pam", "-w", "unlocked at login").status == 0)
        #expect(try asUser("lock-keychain").status == 0)
        #expect(try asUser("find-generic-password", "-s", "pam", "-w").status == 36, "locked: errSecInteractionNotAllowed")

        // A wrong password: PAM goes on (the module never decides a login), the keychain
        // stays locked, and the failure counts as an unlock's does.
        #expect(try pamtester("authenticate", input: "wrong-pw\n").status == 0)
        #expect(try asUser("find-generic-password", "-s", "pam", "-w").status == 36)
        #expect(try asUser("show-keychain-info").stdout.contains("failed unlocks: 1"))

        // The right one unlocks it: a WhenUnlocked item reads.
        #expect(try pamtester("authenticate", input: "login-pw\n").status == 0)
        #expect(try asUser("find-generic-password", "-s", "pam", "-w").stdout == "unlocked at login\n")

        // passwd: the keychain password follows the login password.
        #expect(try pamtester("chauthtok", input: "login-pw\nnew-pw\nnew-pw\n").status == 0)
        #expect(try asUser("lock-keychain").status == 0)
        #expect(try asUser("unlock-keychain", input: "login-pw\n").status != 0, "the old password no longer opens it")
        #expect(try asUser("unlock-keychain", input: "new-pw\n").status == 0)
        #expect(try asUser("find-generic-password", "-s", "pam", "-w").stdout == "unlocked at login\n")

        // A module that cannot do its work never stands in the way of a login.
        try """
        auth     optional  \(module) security=/nonexistent/security
        auth     required  pam_permit.so
        """.write(toFile: "/etc/pam.d/" + service, atomically: true, encoding: .utf8)
        #expect(try pamtester("authenticate", input: "new-pw\n").status == 0)
    }
}
