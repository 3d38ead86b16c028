import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The portal back end (`org.freedesktop.impl.portal.Secret`): xdg-desktop-portal — here a
/// copy of Python the test build takes for it — retrieves each sandboxed app's master secret
/// over a pipe; the secret is the app's own item; nobody else may ask.
@Suite(.requires("dbus-daemon", "bwrap"))
struct SecretPortalTests {
    static let retrieve = """
        import os, sys
        from jeepney import new_method_call, DBusAddress, MessageType, HeaderFields
        from jeepney.io.blocking import open_dbus_connection
        conn = open_dbus_connection(bus='SESSION', enable_fds=True)
        for app in sys.argv[1:]:
            r, w = os.pipe()
            message = new_method_call(DBusAddress('/org/freedesktop/portal/desktop', bus_name='org.freedesktop.secrets',
                                                  interface='org.freedesktop.impl.portal.Secret'),
                                      'RetrieveSecret', 'osha{sv}', ('/org/freedesktop/portal/desktop/request/1_2/t', app, w, {}))
            reply = conn.send_and_get_reply(message, timeout=20)
            os.close(w)
            if reply.header.message_type == MessageType.error:
                print(app, 'error', reply.header.fields[HeaderFields.error_name])
                continue
            data = b''
            while chunk := os.read(r, 4096):
                data += chunk
            print(app, 'response', reply.body[0], len(data), data.hex()[:16])
        """

    @Test func thePortalGetsOneSecretPerAppAndNobodyElseGetsAny() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        chmod(directory, 0o755)
        let portal = directory + "/xdg-desktop-portal"
        try CommandRunner.copyExecutable(URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, to: portal)
        let bus = try SessionBus(daemonEnvironment: ["TROUSSEAU_TEST_PORTAL_EXECUTABLE": portal])

        let first = try bus.python(Self.retrieve, ["org.example.Alpha", "org.example.Beta", "org.example.Alpha", ""], interpreter: portal)
        #expect(first.status == 0, "\(first.stderr) \(bus.keychain.logText)")
        let lines = first.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        try #require(lines.count == 4, "\(first.stdout)")
        #expect(lines[0][1...3] == ["response", "0", "64"] && lines[1][1...3] == ["response", "0", "64"])
        #expect(lines[0][4] == lines[2][4], "the same app gets the same secret")
        #expect(lines[0][4] != lines[1][4], "another app another")
        #expect(lines[3] == ["", "response", "2", "0"] || lines[3] == ["response", "2", "0"], "no app id, no secret: \(lines[3])")

        // Anyone else — a host program, the app itself — is refused.
        let host = try bus.python(Self.retrieve, ["org.example.Alpha"])
        #expect(host.stdout == "org.example.Alpha error org.freedesktop.DBus.Error.AccessDenied\n", "\(host.stderr)")
        let sandboxed = try bus.python(Self.retrieve, ["org.example.Alpha"], sandbox: try bus.flatpakSandbox("org.example.Alpha"))
        #expect(sandboxed.stdout == "org.example.Alpha error org.freedesktop.DBus.Error.AccessDenied\n", "\(sandboxed.stderr)")

        // The secret is Alpha's own item: Alpha finds it, Beta does not.
        let find = """
            from client import *
            conn = connect()
            found = ok(call(conn, ROOT, SVC, 'SearchItems', 'a{ss}', ({'xdg:schema': 'org.freedesktop.portal.Secret'},)))[0]
            print([ok(call(conn, p, PROPS, 'Get', 'ss', (ITEM, 'Attributes')))[0][1]['app_id'] for p in found])
            """
        #expect(try bus.python(find, sandbox: try bus.flatpakSandbox("org.example.Alpha")).stdout == "['org.example.Alpha']\n")
        #expect(try bus.python(find, sandbox: try bus.flatpakSandbox("org.example.Beta")).stdout == "['org.example.Beta']\n")
        #expect(try bus.python(find).stdout == "[]\n")
    }
}
