// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation

/// A PostgreSQL 15 server of the tests' own (Debian's `postgresql-15`): a data directory in a
/// temporary directory, listening on a Unix socket there and on no TCP port, run as an
/// ordinary user (`postgres` when the tests run as root; PostgreSQL refuses root) and stopped
/// by its pid. ``shared`` is started once per test process and stopped when it exits.
public final class PostgresServer: @unchecked Sendable {
    public static let binaries = "/usr/lib/postgresql/15/bin"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binaries + "/initdb") }

    public let directory: String
    /// The server's pid.
    public let pid: pid_t
    /// The superuser initdb made (trust authentication on the socket only).
    public let user = "trousseau"

    public init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else { throw PostgresServerError("no postgres user to run PostgreSQL as") }
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        let data = directory + "/data"
        let initdb = try Self.run("initdb", ["-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"])
        guard initdb.status == 0 else { throw PostgresServerError("initdb: \(initdb.stderr)") }
        // postgres itself, as a child of this process, not through pg_ctl: Foundation learns
        // that a child exited when a socket the child inherited closes, and the server pg_ctl
        // leaves behind would hold pg_ctl's copy open for ever.
        let log = directory + "/server.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let (executable, prefix) = Self.command("postgres")
        server.executableURL = URL(fileURLWithPath: executable)
        server.arguments = prefix + ["-D", data, "-k", directory, "-c", "listen_addresses="]
        server.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        server.currentDirectoryURL = URL(fileURLWithPath: "/")
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = FileHandle(forWritingAtPath: log)
        server.standardError = FileHandle(forWritingAtPath: log)
        try server.run()
        pid = server.processIdentifier  // setpriv execs postgres: the same process
        // Ready when postmaster.pid's eighth line says so.
        for _ in 0..<600 {
            let status = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8))?.split(separator: "\n", omittingEmptySubsequences: false)
            if let status, status.count >= 8, status[7].trimmingCharacters(in: .whitespaces) == "ready" { return }
            guard server.isRunning else { break }
            usleep(100_000)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        stop()
        throw PostgresServerError("postgres did not start: \(text)")
    }

    private let server = Process()

    /// The executable and leading arguments that run `program` as the server's user.
    static func command(_ program: String) -> (String, [String]) {
        // setpriv execs the program itself (runuser forks and waits under a PAM session).
        geteuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid", "postgres", "--regid", "postgres", "--init-groups", binaries + "/" + program])
            : (binaries + "/" + program, [])
    }

    /// Runs one of PostgreSQL's programs as the user the server runs as.
    static func run(_ program: String, _ arguments: [String]) throws -> CommandResult {
        let (executable, prefix) = command(program)
        return try CommandRunner.run(executable: executable, prefix + arguments, environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], clearing: true, in: "/")
    }

    /// Makes an empty database and answers the URL trousseau-syncd and `SQLSyncStore` take.
    public func makeDatabase() throws -> String {
        let name = "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let made = try Self.run("createdb", ["-h", directory, "-U", user, name])
        guard made.status == 0 else { throw PostgresServerError("createdb: \(made.stderr)") }
        return "postgres+uds://\(user)@localhost\(directory)/.s.PGSQL.5432#\(name)"
    }

    /// Stops the server by its pid (a fast shutdown, then SIGKILL after ten seconds) and
    /// removes its directory.
    public func stop() {
        kill(pid, SIGINT)
        for _ in 0..<100 where server.isRunning {
            usleep(100_000)
        }
        if server.isRunning { kill(pid, SIGKILL) }
        server.waitUntilExit()
        try? FileManagerLite.removeTree(directory)
    }

    /// The test process's server, started on first use.
    public static let shared: Result<PostgresServer, any Error> = {
        let result = Result { try PostgresServer() }
        if case .success = result {
            atexit {
                if case .success(let server) = PostgresServer.shared { server.stop() }
            }
        }
        return result
    }()
}

public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
#endif
