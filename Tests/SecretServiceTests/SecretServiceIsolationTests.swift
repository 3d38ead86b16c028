import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/SECURITY.md's Secret Service table as a test matrix: two Flatpak apps (bwrap roots
/// whose /.flatpak-info names them), an app signed for Trousseau (a signed copy of Python),
/// and host programs each see exactly their own items — through searches, properties, the
/// collection's items, GetSecrets and calls on the others' (guessed) paths, and signals.
@Suite(.requires("dbus-daemon", "bwrap"))
struct SecretServiceIsolationTests {
    @Test func eachScopeSeesExactlyItsOwnItems() throws {
        let bus = try SessionBus()
        let alpha = try bus.flatpakSandbox("org.example.Alpha")
        let beta = try bus.flatpakSandbox("org.example.Beta")
        let signed = try signedPython(bus, team: "S1GNEDTEAM", groups: ["S1GNEDTEAM.secrets"])

        var paths: [String] = []
        for (name, interpreter, sandbox) in [("host", "/usr/bin/python3", []), ("alpha", "/usr/bin/python3", alpha),
                                              ("beta", "/usr/bin/python3", beta), ("signed", signed, [])] {
            let stored = try bus.python("import client, sys; client.store_as(sys.argv[1])", [name], interpreter: interpreter, sandbox: sandbox)
            #expect(stored.status == 0, "\(name): \(stored.stderr) \(bus.keychain.logText)")
            paths.append(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // A second host program shares the host scope.
        #expect(try bus.python("import client, sys; client.store_as(sys.argv[1])", ["host2"]).status == 0)

        let script = "import client, sys; client.report(sys.argv[1], sys.argv[2:])"
        let collection = "/org/freedesktop/secrets/collection/login"
        for (name, interpreter, sandbox, sees) in [("host", "/usr/bin/python3", [], ["host", "host2"]), ("alpha", "/usr/bin/python3", alpha, ["alpha"]),
                                                   ("beta", "/usr/bin/python3", beta, ["beta"]), ("signed", signed, [], ["signed"])] {
            let report = try bus.python(script, [name] + paths, interpreter: interpreter, sandbox: sandbox)
            #expect(report.status == 0, "\(name): \(report.stderr)")
            let readable = ["host", "alpha", "beta", "signed"].filter { sees.contains($0) }
            let expected = [
                "\(name) search: \(sees.joined(separator: " "))",
                "\(name) items: \(sees.joined(separator: " "))",
                "\(name) collections: \(collection) /org/freedesktop/secrets/collection/session",
                "\(name) secrets: \(readable.joined(separator: " "))",
            ] + readable.map { "\(name) reads \($0)" }
            #expect(report.stdout == expected.joined(separator: "\n") + "\n", "\(name) sees exactly \(sees)")
        }

        // Items are in the scope's access group: the app id's, the host's, the signed app's.
        let dump = try bus.security("dump-keychain")
        for group in ["org.freedesktop.secrets.flatpak.org.example.Alpha", "org.freedesktop.secrets.flatpak.org.example.Beta",
                      "org.freedesktop.secrets.host", "S1GNEDTEAM.secrets"] {
            #expect(dump.stdout.contains("secret service: access group \"\(group)\", content type \"text/plain\"\n    \"owner\"="), "\(group) in \(dump.stdout)")
        }
    }

    /// A Snap app — a process in a `snap.<instance>.<app>…` unit, as snapd starts one (made
    /// here as a freezer cgroup of that name, which only root can make) — gets its own scope:
    /// before, only `/.flatpak-info` marked a sandbox, and a Snap read the host's items.
    @Test(.enabled(if: SnapUnit.canMake, "needs a writable freezer cgroup hierarchy (root)"))
    func aSnapAppSeesOnlyItsOwnItems() throws {
        let bus = try SessionBus()
        let unit = try SnapUnit("snap.notes-app.notes-app-\(UInt32.random(in: 0...UInt32.max)).scope")
        defer { unit.remove() }
        var paths: [String] = []
        for (name, sandbox) in [("host", []), ("snap", unit.prefix)] {
            let stored = try bus.python("import client, sys; client.store_as(sys.argv[1])", [name], sandbox: sandbox)
            #expect(stored.status == 0, "\(name): \(stored.stderr) \(bus.keychain.logText)")
            paths.append(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let collection = "/org/freedesktop/secrets/collection/login"
        for (name, sandbox) in [("host", []), ("snap", unit.prefix)] {
            let report = try bus.python("import client, sys; client.report(sys.argv[1], sys.argv[2:])", [name] + paths, sandbox: sandbox)
            #expect(report.status == 0, "\(name): \(report.stderr)")
            let expected = [
                "\(name) search: \(name)", "\(name) items: \(name)",
                "\(name) collections: \(collection) /org/freedesktop/secrets/collection/session",
                "\(name) secrets: \(name)", "\(name) reads \(name)",
            ]
            #expect(report.stdout == expected.joined(separator: "\n") + "\n", "\(name) sees only its own")
        }
        let dump = try bus.security("dump-keychain")
        #expect(dump.stdout.contains("secret service: access group \"org.freedesktop.secrets.snap.notes-app\""), "\(dump.stdout)")
    }

    @Test func signalsGoOnlyToTheOwningScopesConnections() throws {
        let bus = try SessionBus()
        let alpha = try bus.flatpakSandbox("org.example.Alpha")
        let beta = try bus.flatpakSandbox("org.example.Beta")
        // Listeners in alpha, beta and the host; then alpha stores an item.
        let python = "/usr/bin/python3"
        let listen = "import client, sys; client.listen(sys.argv[1], 3)"
        let quoted = { (words: [String]) in words.map { "'" + $0 + "'" }.joined(separator: " ") }
        let script = """
            \(quoted(alpha + [python, "-c", listen, "alpha-listener"])) > \(bus.directory)/alpha.out &
            \(quoted(beta + [python, "-c", listen, "beta-listener"])) > \(bus.directory)/beta.out &
            \(quoted([python, "-c", listen, "host-listener"])) > \(bus.directory)/host.out &
            for f in alpha beta host; do while ! grep -q ready \(bus.directory)/$f.out 2>/dev/null; do sleep 0.05; done; done
            \(quoted(alpha + [python, "-c", "import client, sys; client.store_as(sys.argv[1])", "alpha"])) > /dev/null
            wait
            cat \(bus.directory)/alpha.out \(bus.directory)/beta.out \(bus.directory)/host.out
            """
        var environment = bus.clientEnvironment
        environment["PYTHONPATH"] = bus.directory
        // client.py is written by the first python() call.
        _ = try bus.python("import client")
        let result = try CommandRunner.run(executable: "/bin/sh", ["-c", script], environment: environment, clearing: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ready\nalpha-listener heard ItemCreated\nready\nready\n", "only alpha's connections hear of alpha's item: \(result.stderr)")
    }

    /// A copy of Debian's Python signed by a developer identity of this keychain's local root,
    /// entitled to `groups`.
    private func signedPython(_ bus: SessionBus, team: String, groups: [String]) throws -> String {
        let apps = bus.directory + "/apps"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        let identity = apps + "/identity"
        let created = try bus.security("create-developer-identity", "--team", team, "--out", identity)
        try #require(created.status == 0, "\(created.stderr)")
        let python = apps + "/python3"
        try CommandRunner.copyExecutable(URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, to: python)
        let entitlements = apps + "/entitlements.json"
        let groupList = groups.map { "\"\($0)\"" }.joined(separator: ", ")
        try "{\"application-identifier\": \"\(team).python\", \"keychain-access-groups\": [\(groupList)]}"
            .write(toFile: entitlements, atomically: true, encoding: .utf8)
        let signed = try bus.security("codesign", "--identity", identity, "--entitlements", entitlements, python)
        try #require(signed.status == 0, "\(signed.stderr)")
        return python
    }
}

/// A freezer cgroup named as snapd names a Snap app's unit; a command run through ``prefix``
/// enters it first.
struct SnapUnit {
    static let hierarchy = "/sys/fs/cgroup/freezer"
    let path: String

    static var canMake: Bool {
        let probe = hierarchy + "/trousseau-probe-\(getpid())"
        guard mkdir(probe, 0o755) == 0 else { return false }
        rmdir(probe)
        return true
    }

    init(_ name: String) throws {
        path = Self.hierarchy + "/" + name
        guard mkdir(path, 0o755) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    var prefix: [String] { ["/bin/sh", "-c", "echo $$ > \(path)/cgroup.procs && exec \"$@\"", "snap-app"] }

    func remove() {
        // Its processes have exited by now; a cgroup with none is removed with rmdir.
        rmdir(path)
    }
}
