import Foundation
import KeychainTestSupport
import Testing

/// The administrator's and the system's trust settings through `security`: the
/// administrator's file is root's to write and every daemon's to read (here at a path the
/// test names, instead of /etc/trousseau/trust-settings); the system's are the CA bundle.
@Suite final class TrustSettingsCommandTests {
    let keychain: DaemonKeychain
    let adminFile: String
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/fixtures").path

    init() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        adminFile = directory + "/etc/trust-settings"
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TEST_ADMIN_TRUST_SETTINGS": adminFile])
        _ = try keychain.connect()  // the daemon, with the test's admin path, before the tool runs
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
    }

    @Test func theAdministratorsSettingsAreRootsToWriteAndTheirFileIsChecked() throws {
        let root = fixtures + "/signing-root.pem", leaf = fixtures + "/signing.cer"
        let added = try security("add-trusted-cert", "-d", root)
        guard getuid() == 0 else {
            #expect(added.status == 1)
            #expect(added.stderr == "SecTrustSettingsSetTrustSettings: The authorization was denied since no user interaction was possible.\n")
            #expect(!FileManager.default.fileExists(atPath: adminFile))
            return
        }
        #expect(added.status == 0, "\(added.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: adminFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o644, "every user's daemon reads it")
        #expect(try security("dump-trust-settings", "-d").stdout == "Number of trusted certs = 1\nCert 0: Golden Signing Root\n   Number of trust settings : 0\n")
        let none = try security("dump-trust-settings")
        #expect(none.status == 1 && none.stderr == "SecTrustSettingsCopyCertificates: No Trust Settings were found.\n", "the user's domain is apart")
        #expect(try security("verify-cert", "-c", leaf, "-p", "codeSign", "-q").status == 0, "the administrator's root anchors the chain")

        // The user's settings come first: a user's deny beats the administrator's anchor.
        #expect(try security("add-trusted-cert", "-r", "deny", root).status == 0)
        let denied = try security("verify-cert", "-c", leaf, "-p", "codeSign")
        #expect(denied.status == 1 && denied.stdout.contains("CSSMERR_APPLETP_TRUST_SETTING_DENY"), "\(denied.stdout)")
        #expect(try security("remove-trusted-cert", root).status == 0)

        // A file others may write is not the administrator's: ignored, so it anchors nothing.
        chmod(adminFile, 0o666)
        #expect(try security("dump-trust-settings", "-d").status == 1)
        #expect(try security("verify-cert", "-c", leaf, "-p", "codeSign", "-q").status == 1)
        chmod(adminFile, 0o644)
        #expect(try security("remove-trusted-cert", "-d", root).status == 0)
        #expect(try security("dump-trust-settings", "-d").status == 1)
    }

    @Test func theSystemsSettingsAreTheCABundleReadOnly() throws {
        let bundle = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"].first { FileManager.default.fileExists(atPath: $0) }
        let dump = try security("dump-trust-settings", "-s")
        guard let bundle else {
            #expect(dump.status == 1)
            return
        }
        let count = try String(contentsOfFile: bundle, encoding: .utf8).components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(dump.status == 0)
        #expect(dump.stdout.hasPrefix("Number of trusted certs = \(count)\nCert 0: "))
        #expect(dump.stdout.components(separatedBy: "   Number of trust settings : 0\n").count - 1 == count)
        // No command writes the system's domain: add and remove have no flag for it, and
        // the bundle is untouched by everything here.
        let before = try Data(contentsOf: URL(fileURLWithPath: bundle))
        #expect(try security("add-trusted-cert", fixtures + "/signing-root.pem").status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: bundle)) == before)
    }

    /// System Roots as macOS names it: a read-only keychain whose certificates are the CA
    /// bundle's, listed when named; the login keychain by macOS's well-known path.
    @Test func systemRootsIsAReadOnlyKeychainOfTheBundle() throws {
        let roots = "/System/Library/Keychains/SystemRootCertificates.keychain"
        let bundle = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"].first { FileManager.default.fileExists(atPath: $0) }
        let listed = try security("find-certificate", "-a", "-Z", roots)
        if let bundle {
            let count = try String(contentsOfFile: bundle, encoding: .utf8).components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
            #expect(listed.status == 0)
            #expect(listed.stdout.components(separatedBy: "SHA-1 hash: ").count - 1 == count)
            #expect(listed.stdout.contains("keychain: \"\(roots)\"\n"))
        }
        #expect(try security("find-certificate", "-a").stdout.isEmpty, "System Roots is not in the search list")
        let add = try security("add-certificates", "-k", roots, fixtures + "/signing-root.pem")
        #expect(add.status == 1 && add.stderr == "security: SecCertificateAddToKeychain: This keychain cannot be modified.\n")
        let imported = try security("import", fixtures + "/signing.cer", "-k", roots)
        #expect(imported.status == 1 && imported.stderr == "security: SecKeychainItemImport: This keychain cannot be modified.\n")
        let deleted = try security("delete-certificate", "-c", "Any", roots)
        #expect(deleted.status == 52 && deleted.stderr == "security: SecKeychainItemDelete: This keychain cannot be modified.\n")

        // fastlane's default keychain path names the login keychain.
        let home = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(try security("import", fixtures + "/signing.cer", "-k", home + "/Library/Keychains/login.keychain-db").stdout == "1 certificate imported.\n")
        #expect(try security("find-certificate", "-a", "-Z", "login").stdout.contains("SHA-1 hash: "))
    }
}
