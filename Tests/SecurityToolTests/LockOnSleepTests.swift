import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `set-keychain-settings -l`: a file keychain locks when logind says the machine is going to
/// sleep. A real dbus-daemon stands in for the system bus (securityd's test hook), and
/// python3-dbus plays logind: the owner of `org.freedesktop.login1` sends `PrepareForSleep`.
@Suite(.requires("dbus-daemon"))
final class LockOnSleepTests {
    let directory: String
    let bus: String
    let busDaemon: pid_t
    let keychain: DaemonKeychain

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        bus = "unix:path=" + directory + "/bus"
        // Started by Python with every other descriptor closed: dbus-daemon keeps what it
        // inherits, and our output pipe held open would never reach its end.
        let started = try CommandRunner.run(
            executable: "/usr/bin/python3",
            [
                "-c",
                "import subprocess, sys; print(subprocess.Popen(['dbus-daemon', '--session', '--nofork', '--nopidfile', '--address=' + sys.argv[1]], "
                    + "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True).pid)",
                bus,
            ],
            environment: ["PATH": "/usr/bin:/bin"], clearing: true)
        busDaemon = try #require(pid_t(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: directory + "/bus") { usleep(10_000) }
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TEST_SYSTEM_BUS": bus])
        _ = try keychain.connect()  // securityd, listening to this bus
    }

    deinit {
        kill(busDaemon, SIGKILL)  // it inherits our blocked signals, SIGTERM among them
        try? FileManagerLite.removeTree(directory)
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
    }

    /// Sends PrepareForSleep(true) on the test's bus, as logind does when `owning` its name.
    func announceSleep(owning: Bool) throws {
        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            if sys.argv[2] == "own":
                assert bus.request_name("org.freedesktop.login1") == dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER
            message = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
            message.append(True, signature="b")
            bus.send_message(message)
            bus.flush()
            """
        let sent = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", script, bus, owning ? "own" : "forge"], clearing: true)
        try #require(sent.status == 0, "\(sent.stderr)")
    }

    func isUnlocked(_ path: String) throws -> Bool {
        let found = try security("find-generic-password", "-s", "sleep", "-w", path)
        #expect(found.status == 0 || found.status == 36, "\(found.stderr)")
        return found.status == 0
    }

    @Test func keychainsSetToLockOnSleepLockWhenLogindSaysSoAndOnlyThen() throws {
        let sleeper = directory + "/sleeper.keychain"
        let insomniac = directory + "/insomniac.keychain"
        for (path, settings) in [(sleeper, ["-l"]), (insomniac, [])] {
            #expect(try security("create-keychain", "-p", "pw", path).status == 0)
            let set = try CommandRunner.run("security", ["set-keychain-settings"] + settings + [path], environment: ["KEYCHAIN_HOME": keychain.home])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try security("add-generic-password", "-a", "me", "-s", "sleep", "-w", "zzz", path).status == 0)
        }
        #expect(try security("show-keychain-info", sleeper).stderr.contains("lock-on-sleep"))

        // logind announces sleep (again, until securityd has subscribed): the sleeper locks.
        var locked = false
        for _ in 0..<50 where !locked {
            try announceSleep(owning: true)
            usleep(100_000)
            locked = try !isUnlocked(sleeper)
        }
        #expect(locked, "a keychain set to lock on sleep locked: \(keychain.logText)")
        #expect(try isUnlocked(insomniac), "one without -l did not")
        #expect(keychain.logText.contains("going to sleep: locked 1 keychain(s)"))

        // Anyone else on the bus sending the same signal is not logind: nothing locks.
        #expect(try security("unlock-keychain", "-p", "pw", sleeper).status == 0)
        try announceSleep(owning: false)
        usleep(500_000)
        #expect(try isUnlocked(sleeper), "a forged PrepareForSleep is ignored")
    }
}
