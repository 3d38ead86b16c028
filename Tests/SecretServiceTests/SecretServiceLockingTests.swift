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
@Suite(.requires("dbus-daemon"))
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

    /// A client that goes away while its prompt waits for the agent leaves nothing behind:
    /// the agent's answer still unlocks the keychain, the prompt is gone for everyone, and
    /// the provider goes on serving.
    @Test func aClientThatLeavesMidPromptLeavesNothingBehind() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        chmod(directory, 0o755)
        let agent = directory + "/agent"
        let answered = directory + "/answered"
        try "#!/bin/sh\n[ \"$1\" = passcode ] || exit 1\nsleep 1\ntouch \(answered)\necho \(Self.passcode)\n"
            .write(toFile: agent, atomically: true, encoding: .utf8)
        chmod(agent, 0o755)
        let bus = try lockedBus(daemonEnvironment: ["TROUSSEAU_PASSCODE_AGENT": agent])
        let leaving = """
            import os
            from client import *
            conn = connect()
            unlocked, prompt = ok(call(conn, ROOT, SVC, 'Unlock', 'ao', ([LOGIN],)))
            ok(call(conn, prompt, PROMPT, 'Prompt', 's', ('',)))
            print(prompt)
            print('left before the answer', not os.path.exists('\(answered)'))
            conn.close()
            """
        let left = try bus.python(leaving)
        #expect(left.status == 0, "\(left.stderr)")
        let lines = left.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines.last == "left before the answer True", "\(left.stdout)")
        let prompt = lines.first ?? "/"
        let after = """
            import time
            from client import *
            conn = connect()
            for _ in range(100):
                if not ok(call(conn, LOGIN, PROPS, 'Get', 'ss', (COLL, 'Locked')))[0][1]:
                    break
                time.sleep(0.1)
            print('locked', ok(call(conn, LOGIN, PROPS, 'Get', 'ss', (COLL, 'Locked')))[0][1])
            print('prompt', error(call(conn, '\(prompt)', PROMPT, 'Prompt', 's', ('',))))
            """
        let result = try bus.python(after)
        #expect(result.status == 0, "\(result.stderr) \(bus.keychain.logText)")
        #expect(result.stdout == "locked False\nprompt org.freedesktop.DBus.Error.UnknownObject\n", "\(bus.keychain.logText)")
        let lookup = try bus.secretTool("lookup", "app", "locked")
        #expect(lookup.status == 0 && lookup.stdout == "behind the passcode", "\(lookup.stderr) \(bus.keychain.logText)")
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
