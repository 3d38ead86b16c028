import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The System keychain: a securityd started with `--system` (as its system unit starts it,
/// here on a socket and home of the test's), reached by `security` through the macOS path
/// `/Library/Keychains/System.keychain`. Its owner (root) reads and writes it; as root, the
/// test also runs the tool as another user, who lists its certificates and nothing else.
@Suite final class SystemKeychainTests {
    let directory: String
    let socket: String
    let daemon: SystemKeychainDaemon

    static let otherUID = 40_021

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        // Another user must reach the programs and the socket, as they reach /usr and /run.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        for program in ["securityd", "trousseau-enclave", "security"] {
            try CommandRunner.copyExecutable(CommandRunner.productsDirectory.appendingPathComponent(program).path, to: directory + "/bin/" + program)
        }
        // A copy of the tool away from securityd is just an unsigned app, with a group of its own.
        try FileManager.default.createDirectory(atPath: directory + "/app", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try CommandRunner.copyExecutable(CommandRunner.productsDirectory.appendingPathComponent("security").path, to: directory + "/app/security")
        daemon = try SystemKeychainDaemon(directory: directory, securityd: directory + "/bin/securityd")
        socket = daemon.socket
    }

    deinit {
        daemon.stop()
        // The users' own daemons, started by the tool, go with the test's directory.
        _ = try? CommandRunner.run(executable: "/usr/bin/pkill", ["-f", directory + "/bin/securityd"], clearing: true)
        try? FileManagerLite.removeTree(directory)
    }

    /// `security` from the copy beside the system securityd, as `uid` (nil: this process's
    /// user), with a home of its own and the test's system socket.
    func security(_ arguments: String..., as uid: Int? = nil, app: Bool = false) throws -> CommandResult {
        // A home and a runtime directory of the test's: the user's own daemon (the tool starts
        // it for trust settings) must not be one a test left, nor the machine user's.
        let home = directory + "/home-\(uid ?? Int(getuid()))"
        let runtime = directory + "/runtime-\(uid ?? Int(getuid()))"
        for own in [home, runtime] where !FileManager.default.fileExists(atPath: own) {
            try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            if let uid { try FileManager.default.setAttributes([.ownerAccountID: uid, .groupOwnerAccountID: uid], ofItemAtPath: own) }
        }
        let environment = [
            "HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin", "TROUSSEAU_SYSTEM_SOCKET": socket, "TROUSSEAU_UNSAFE_FAST_KDF": "1",
            "TROUSSEAU_SECURITYD_IDLE_SECONDS": "5", "TROUSSEAU_TPM": "off",
        ]
        let tool = directory + (app ? "/app/security" : "/bin/security")
        if let uid {
            return try CommandRunner.run(
                executable: "/usr/bin/setpriv", ["--reuid", "\(uid)", "--regid", "\(uid)", "--clear-groups", tool] + arguments, environment: environment, clearing: true)
        }
        return try CommandRunner.run(executable: tool, arguments, environment: environment, clearing: true)
    }

    static let system = "/Library/Keychains/System.keychain"

    static let asRoot = getuid() == 0

    /// The owner adds a certificate (as mkcert adds it, with its trust settings — here the
    /// user's: `-d`, the administrator's, would write the machine's file,
    /// /etc/trousseau/trust-settings) and a password; returns the certificate's PEM.
    func ownerAddsACertificateAndAPassword() throws -> String {
        let root = GoldenTranscriptTests.directory.appendingPathComponent("fixtures/signing-root.pem").path
        let added = try security("add-trusted-cert", "-k", Self.system, root)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try security("add-generic-password", "-a", "802.1X", "-s", "CorpNet", "-w", "wifi-secret", Self.system).status == 0)
        return try String(contentsOfFile: root, encoding: .utf8)
    }

    @Test func itsOwnerWritesAndReadsIt() throws {
        let pem = try ownerAddsACertificateAndAPassword()
        #expect(try security("dump-trust-settings").stdout.contains("Golden Signing Root"))
        #expect(try security("find-generic-password", "-s", "CorpNet", "-w", Self.system).stdout == "wifi-secret\n")
        let listed = try security("find-certificate", "-a", "-p", Self.system)
        #expect(listed.status == 0 && listed.stdout == pem, "\(listed.stderr)")
        // Nothing of it is in the owner's login keychain.
        #expect(try security("find-generic-password", "-s", "CorpNet", "login.keychain").status == 44)
    }

    @Test(.enabled(if: asRoot, "needs root: the tool runs as another user through setpriv"))
    func otherUsersReadOnlyItsCertificates() throws {
        let pem = try ownerAddsACertificateAndAPassword()
        let other = Self.otherUID
        let read = try security("find-certificate", "-a", "-p", Self.system, as: other)
        #expect(read.status == 0 && read.stdout == pem, "a user lists the System keychain's certificates: \(read.stderr)")
        let app = try security("find-certificate", "-a", "-p", Self.system, as: other, app: true)
        #expect(app.status == 0 && app.stdout == pem, "any program of another user reads them, not only the tool: \(app.stderr)")
        let secret = try security("find-generic-password", "-s", "CorpNet", "-w", Self.system, as: other)
        #expect(secret.status == 36 && !secret.stdout.contains("wifi-secret"), "\(secret.stdout)\(secret.stderr)")
        #expect(secret.stderr.contains("User interaction is not allowed."), "\(secret.stderr)")
        let attributes = try security("find-generic-password", "-s", "CorpNet", Self.system, as: other)
        #expect(attributes.status == 36 && !attributes.stdout.contains("CorpNet"), "not even its attributes")
        let write = try security("add-generic-password", "-a", "me", "-s", "Mine", "-w", "x", Self.system, as: other)
        #expect(write.status == Int32(UInt8(truncatingIfNeeded: -61)) && write.stderr.contains("write permissions error"), "\(write.stderr)")
        let delete = try security("delete-certificate", "-c", "Golden Signing Root", Self.system, as: other)
        #expect(delete.status != 0)
        // What the user was refused is all still there.
        #expect(try security("find-generic-password", "-s", "CorpNet", "-w", Self.system).stdout == "wifi-secret\n")
        #expect(try security("find-certificate", "-a", "-p", Self.system).stdout == pem)
        #expect(try security("find-generic-password", "-s", "Mine", Self.system).status == 44)
    }

    /// A profile installed for the machine (`--system`) goes into the System keychain, and
    /// its roots become the administrator's anchors; other users read its certificates and
    /// nothing else, and can neither install nor remove profiles there.
    @Test func aSystemProfileIsRootsAndItsRootsAnchorEveryUser() throws {
        let fixtures = directory + "/profiles"
        try FileManager.default.createDirectory(atPath: fixtures, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let made = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", ProfileTests.makeFixtures, fixtures], clearing: false)
        try #require(made.status == 0, "fixtures: \(made.stderr)")
        let root = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/ca.der"))
        func anchored() -> Bool { (try? Data(contentsOf: URL(fileURLWithPath: daemon.adminTrustSettings)))?.range(of: root) != nil }

        let installed = try security("profiles", "install", fixtures + "/full.mobileconfig", "--system")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(anchored(), "the root payload is an anchor of the administrator's")
        #expect(
            try security("profiles", "list", "--system").stdout
                == "_computerlevel[1] attribute: profileIdentifier: com.example.full\nThere are 1 configuration profiles installed\n")
        #expect(try security("profiles", "list").stdout == "There are no configuration profiles installed\n", "not the user's")
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Office Net", "-w", Self.system).stdout == "wifi-pass\n")

        #expect(try security("profiles", "remove", "com.example.full", "--system").status == 0)
        #expect(!anchored(), "its anchor went with it")
        #expect(try security("find-certificate", "-c", "Profile Test Root", Self.system).status == 44)
    }

    @Test(.enabled(if: asRoot, "needs root: the tool runs as another user through setpriv"))
    func otherUsersReadASystemProfilesCertificatesAndChangeNoProfile() throws {
        let fixtures = directory + "/profiles"
        try FileManager.default.createDirectory(atPath: fixtures, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let made = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", ProfileTests.makeFixtures, fixtures], clearing: false)
        try #require(made.status == 0, "fixtures: \(made.stderr)")
        #expect(try security("profiles", "install", fixtures + "/full.mobileconfig", "--system").status == 0)

        let other = Self.otherUID
        let certificate = try security("find-certificate", "-c", "Profile Test Root", Self.system, as: other)
        #expect(certificate.status == 0, "its certificates are every user's: \(certificate.stderr)")
        #expect(try security("find-generic-password", "-s", "AirPort", "-w", Self.system, as: other).status == 36)
        #expect(try security("profiles", "list", "--system", as: other).status == 36)
        let install = try security("profiles", "install", fixtures + "/identity.mobileconfig", "--system", as: other)
        #expect(install.status == Int32(UInt8(truncatingIfNeeded: -61)), "\(install.stderr)")
        #expect(try security("profiles", "remove", "com.example.full", "--system", as: other).status == Int32(UInt8(truncatingIfNeeded: -61)))
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Office Net", "-w", Self.system).stdout == "wifi-pass\n", "still installed")
    }

    @Test func withoutItsDaemonTheSystemKeychainIsNotAvailableAndNothingStartsOne() throws {
        daemon.stop()
        let read = try security("find-certificate", "-a", Self.system)
        #expect(read.status != 0 && read.stderr.contains("not running"), "\(read.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket), "a user's tool never starts the System keychain's daemon")
    }
}
