import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A keychain with a passcode starts locked (its AfterFirstUnlock items unreadable until the
/// first unlock): the Secret Service says so, finds items by their tokens alone, and unlocks
/// through a prompt — the passcode agent when there is one; with no one to ask, the prompt
/// completes at once, dismissed, never a hang.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon"))
struct SecretServiceLockingTests {
    static let passcode = "2468"

    /// A bus whose keychain holds one item and has a passcode, its daemon restarted (locked).
    func lockedBus(daemonEnvironment: [String: String] = [:]) throws -> SessionBus {
        let bus = try SessionBus(daemonEnvironment: daemonEnvironment)
        #expect(try bus.secretTool("store", "--label=Locked away", "app", "locked", input: "behind the passcode").status == 0)
        let passcode = try CommandRunner.run(
            "security", ["set-keychain-password"], environment: ["KEYCHAIN_HOME": bus.keychain.home],
            input: "\(Self.passcode)\n\(Self.passcode)\n")
        #expect(passcode.status == 0, "\(passcode.stderr)")
        DaemonControl.stop(home: bus.keychain.home)
        return bus
    }

    @Test func withNoOneToAskTheUnlockPromptIsDismissedAtOnce() throws {
        let bus = try lockedBus()
        let script = """
            from client import *
            conn = connect()
            print('locked', ok(call(conn, LOGIN, PROPS, 'Get', 'ss', (COLL, 'Locked')))[0][1])
            unlocked, locked = ok(call(conn, ROOT, SVC, 'SearchItems', 'a{ss}', ({'app': 'locked'},)))
            print('search', len(unlocked), len(locked))
            session = open_plain(conn)
            print('secret', error(call(conn, locked[0], ITEM, 'GetSecret', 'o', (session,))))
            print('create', error(create(conn, session, 'x', {'k': 'v'}, b'v')))
            done, prompt, completed = unlock(conn, locked)
            print('unlock', done, prompt.startswith(ROOT + '/prompt/'), completed)
            print('prompt gone', error(call(conn, prompt, PROMPT, 'Prompt', 's', ('',))))
            """
        let result = try bus.python(script)
        #expect(result.status == 0, "\(result.stderr) \(bus.keychain.logText)")
        #expect(result.stdout == """
            locked True
            search 0 1
            secret org.freedesktop.Secret.Error.IsLocked
            create org.freedesktop.Secret.Error.IsLocked
            unlock [] True (True, ('ao', []))
            prompt gone org.freedesktop.DBus.Error.UnknownObject

            """)
        // libsecret's own unlock-and-retry ends too: secret-tool fails instead of hanging.
        let lookup = try bus.secretTool("lookup", "app", "locked")
        #expect(lookup.status != 0 && lookup.stdout.isEmpty)
    }

    @Test func thePasscodeAgentUnlocksAndLibsecretReadsTheItem() throws {
        let agent = try TemporaryKeychain.makeTemporaryDirectory() + "/agent"
        try "#!/bin/sh\n[ \"$1\" = passcode ] && echo \(Self.passcode)\n".write(toFile: agent, atomically: true, encoding: .utf8)
        chmod(agent, 0o755)
        let bus = try lockedBus(daemonEnvironment: ["TROUSSEAU_PASSCODE_AGENT": agent])
        // secret-tool: SearchItems finds it locked, Unlock gives a prompt, Prompt asks the
        // agent, Completed lists the item, GetSecrets reads it.
        let lookup = try bus.secretTool("lookup", "app", "locked")
        #expect(lookup.status == 0 && lookup.stdout == "behind the passcode", "\(lookup.stderr) \(bus.keychain.logText)")
        let state = try bus.python("from client import *\nprint(ok(call(connect(), LOGIN, PROPS, 'Get', 'ss', (COLL, 'Locked')))[0][1])")
        #expect(state.stdout == "False\n")
    }

    @Test func aWrongPasscodeFromTheAgentLeavesItLockedAndDismissed() throws {
        let agent = try TemporaryKeychain.makeTemporaryDirectory() + "/agent"
        try "#!/bin/sh\necho 0000\n".write(toFile: agent, atomically: true, encoding: .utf8)
        chmod(agent, 0o755)
        let bus = try lockedBus(daemonEnvironment: ["TROUSSEAU_PASSCODE_AGENT": agent])
        let script = """
            from client import *
            conn = connect()
            print(unlock(conn, [LOGIN])[2])
            print(ok(call(conn, LOGIN, PROPS, 'Get', 'ss', (COLL, 'Locked')))[0][1])
            """
        let result = try bus.python(script)
        #expect(result.stdout == "(True, ('ao', []))\nTrue\n", "\(result.stderr)")
    }
}
