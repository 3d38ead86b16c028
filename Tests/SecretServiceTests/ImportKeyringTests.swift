import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `security import-keyring`: keyring files written during the test by the real
/// gnome-keyring-daemon (version 0, its login keyring) and by libsecret's file backend
/// (version 1) import completely — labels, attributes, secrets, dates, as gnome-keyring itself
/// shows them — and only once.
@Suite(.requires("gnome-keyring-daemon", "secret-tool", "dbus-run-session"))
struct ImportKeyringTests {
    /// Every item of the default collection, one line each, sorted: what a client sees.
    static let listing = """
        import secretstorage
        connection = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(connection)
        rows = sorted((item.get_label(), sorted(item.get_attributes().items()), item.get_secret().hex(), item.get_created(), item.get_modified())
                      for item in collection.get_all_items())
        for row in rows:
            print(row)
        """

    /// Stores items in a real gnome-keyring whose login keyring has `password`, prints what
    /// its Secret Service shows, and leaves the keyring file behind.
    func gnomeKeyring(in directory: String, password: String) throws -> (file: String, listing: String) {
        let configuration = directory + "/gk-session.conf"
        try """
            <busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        try Self.listing.write(toFile: directory + "/listing.py", atomically: true, encoding: .utf8)
        let script = """
            start() {
              echo -n '\(password)' | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null &
              daemon=$!
              /usr/bin/python3 -c 'import time, jeepney, jeepney.io.blocking as b
            c = b.open_dbus_connection(bus="SESSION")
            for _ in range(200):
                if c.send_and_get_reply(jeepney.bus_messages.message_bus.NameHasOwner("org.freedesktop.secrets")).body[0]: break
                time.sleep(0.05)'
            }
            start
            echo -n 's3cret' | secret-tool store --label='Demo account' service demo user alice
            printf 'bin\\001ary \\303\\274' | secret-tool store --label='Ünïcode label' service 'ü' user 'x y'
            /usr/bin/python3 -c 'import keyring; keyring.set_password("mail.example", "bob", "pw two")'
            kill $daemon; wait $daemon
            # What gnome-keyring shows for the file: the items as it reads them back.
            start
            /usr/bin/python3 \(directory)/listing.py
            kill $daemon; wait $daemon
            """
        let environment = [
            "HOME": directory, "XDG_DATA_HOME": directory + "/gk-data", "XDG_RUNTIME_DIR": directory, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
        ]
        // The test process blocks SIGTERM, and a child inherits that: gnome-keyring would not
        // end at `kill`. Python clears the mask and becomes the session.
        let result = try CommandRunner.run(
            executable: "/usr/bin/python3",
            [
                "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                "/usr/bin/dbus-run-session", "--config-file=" + configuration, "--", "/bin/sh", "-c", script,
            ],
            environment: environment, clearing: true)
        try #require(result.status == 0 || result.stdout.contains("Demo account"), "\(result.stdout) \(result.stderr)")
        return (directory + "/gk-data/keyrings/login.keyring", result.stdout)
    }

    func importKeyring(_ bus: SessionBus, _ file: String, password: String) throws -> CommandResult {
        try CommandRunner.run(
            "security", ["import-keyring", "--password-stdin", file], environment: ["KEYCHAIN_HOME": bus.keychain.home], input: password + "\n")
    }

    @Test func aLoginKeyringWrittenByGnomeKeyringImportsCompletelyAndOnce() throws {
        let bus = try SessionBus()
        let (file, gnome) = try gnomeKeyring(in: bus.directory, password: "keyring pw")
        #expect(gnome.split(separator: "\n").count == 3, "gnome-keyring holds three items: \(gnome)")
        let header = try #require(FileManager.default.contents(atPath: file)?.prefix(18))
        #expect(Array(header.suffix(2)) == [0, 0], "gnome-keyring wrote a version 0 file")

        let wrong = try importKeyring(bus, file, password: "not it")
        #expect(wrong.status != 0 && wrong.stderr.contains("passphrase you entered is not correct"), "errSecAuthFailed: \(wrong.stderr)")

        let imported = try importKeyring(bus, file, password: "keyring pw")
        #expect(imported.status == 0, "\(imported.stderr) \(bus.keychain.logText)")
        #expect(imported.stdout.hasSuffix("(Login): 3 imported, 0 updated, 0 already here\n"), "\(imported.stdout)")
        let ours = try bus.python(Self.listing)
        #expect(ours.status == 0, "\(ours.stderr)")
        #expect(ours.stdout == gnome, "the same labels, attributes, secrets and dates as gnome-keyring showed")
        #expect(try bus.secretTool("lookup", "service", "demo", "user", "alice").stdout == "s3cret")

        let again = try importKeyring(bus, file, password: "keyring pw")
        #expect(again.stdout.hasSuffix("0 imported, 0 updated, 3 already here\n"), "\(again.stdout)")
        #expect(try bus.python(Self.listing).stdout == gnome, "nothing duplicated")
    }

    @Test func aFileOfLibsecretsFileBackendImports() throws {
        let bus = try SessionBus()
        let file = bus.directory + "/v1.keyring"
        // libsecret's file backend (what it uses inside Flatpak), pointed at a test file.
        var environment = bus.clientEnvironment
        environment["SECRET_BACKEND"] = "file"
        environment["SECRET_FILE_TEST_PATH"] = file
        environment["SECRET_FILE_TEST_PASSWORD"] = "file pw"
        for (label, user, secret) in [("First", "carol", "one"), ("Second", "dave", "two")] {
            let stored = try CommandRunner.run(
                executable: "/usr/bin/secret-tool", ["store", "--label=" + label, "app", "v1", "user", user], environment: environment, input: secret,
                clearing: true)
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        let header = try #require(FileManager.default.contents(atPath: file)?.prefix(18))
        #expect(Array(header.suffix(2)) == [1, 0], "libsecret wrote a version 1 file")

        #expect(try importKeyring(bus, file, password: "wrong").status != 0)
        let imported = try importKeyring(bus, file, password: "file pw")
        #expect(imported.status == 0 && imported.stdout.hasSuffix(": 2 imported, 0 updated, 0 already here\n"), "\(imported.stdout) \(imported.stderr)")
        #expect(try bus.secretTool("lookup", "app", "v1", "user", "dave").stdout == "two")
        let listed = try bus.python(Self.listing).stdout
        #expect(listed.contains("('First', [('app', 'v1'), ('user', 'carol'), ('xdg:schema', ") || listed.contains("('First', [('app', 'v1'), ('user', 'carol')]"), "\(listed)")
    }

    @Test func filesThatAreNotKeyringsAreRefusedAndNothingIsImported() throws {
        let bus = try SessionBus()
        let (file, _) = try gnomeKeyring(in: bus.directory, password: "pw")
        let whole = try #require(FileManager.default.contents(atPath: file))
        let cases: [(String, Data)] = [
            ("text", Data("just some text, not a keyring\n".utf8)),
            ("truncated", whole.prefix(whole.count / 2)),
            ("newer version", whole.prefix(16) + Data([2, 0]) + whole.dropFirst(18)),
            ("empty", Data()),
        ]
        for (name, bytes) in cases {
            let path = bus.directory + "/" + name.replacingOccurrences(of: " ", with: "-")
            try bytes.write(to: URL(fileURLWithPath: path))
            let result = try importKeyring(bus, path, password: "pw")
            #expect(result.status != 0, "\(name) refused")
            #expect(result.stderr.contains("keyring"), "\(name): \(result.stderr)")
        }
        #expect(try bus.python(Self.listing).stdout.isEmpty, "nothing imported")
    }
}
