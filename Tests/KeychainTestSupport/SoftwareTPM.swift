// Test support: compiled in debug builds only.
#if TROUSSEAU_TEST_HOOKS
import Foundation

/// A TPM 2.0 of the test's own: Debian's swtpm on a Unix socket in a temporary directory,
/// its state (seeds, dictionary-attack counter) in a directory beside it, run as `nobody`
/// when the tests run as root, and stopped by its pid. Two of them are two different TPMs.
public final class SoftwareTPM: @unchecked Sendable {
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm") }

    public let directory: String
    public var socket: String { directory + "/tpm.sock" }
    /// What Trousseau's `TROUSSEAU_TPM` and tpm2-tools' `TPM2TOOLS_TCTI` take.
    public var tcti: String { "swtpm:path=\(socket)" }
    private var process: Process?

    /// Starts a new TPM with swtpm's defaults (3 failures allowed, one forgiven every 1000 s).
    public init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        if geteuid() == 0, let nobody = getpwnam("nobody") {
            for path in [directory, directory + "/state"] { chown(path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) }
        }
        try start()
    }

    /// The swtpm process's pid, while it runs.
    public var pid: pid_t? { process.map(\.processIdentifier) }

    /// Starts swtpm on the state it has (again, after ``stop()``).
    public func start() throws {
        unlink(socket)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/swtpm")
        server.arguments = [
            "socket", "--tpm2", "--tpmstate", "dir=\(directory)/state", "--server", "type=unixio,path=\(socket)",
            "--ctrl", "type=unixio,path=\(socket).ctrl", "--flags", "not-need-init,startup-clear",
            "--log", "file=\(directory)/swtpm.log",
        ] + (geteuid() == 0 ? ["--runas", "nobody"] : [])
        server.environment = ["PATH": "/usr/bin:/bin"]
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        process = server
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: socket) {
            guard server.isRunning else { break }
            usleep(10_000)
        }
        guard FileManager.default.fileExists(atPath: socket) else {
            stop()
            throw SoftwareTPMError("swtpm did not start: \((try? String(contentsOfFile: directory + "/swtpm.log", encoding: .utf8)) ?? "")")
        }
    }

    /// Stops swtpm with SIGKILL (no TPM2_Shutdown: a power cut, as far as the TPM knows).
    public func stop() {
        guard let server = process else { return }
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        process = nil
    }

    /// Runs one of tpm2-tools' programs against this TPM, as an administrator would.
    public func tool(_ name: String, _ arguments: [String]) throws -> CommandResult {
        try CommandRunner.run(
            executable: "/usr/bin/" + name, arguments, environment: ["PATH": "/usr/bin:/bin", "TPM2TOOLS_TCTI": tcti], clearing: true, in: "/")
    }

    /// The dictionary-attack counter as `tpm2_getcap properties-variable` reports it.
    public func lockoutCounter() throws -> Int? {
        let output = try tool("tpm2_getcap", ["properties-variable"]).stdout
        guard let line = output.split(separator: "\n").first(where: { $0.contains("TPM2_PT_LOCKOUT_COUNTER") }),
            let value = line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        return Int(value.dropFirst(2), radix: 16)
    }

    deinit {
        stop()
        try? FileManagerLite.removeTree(directory)
    }
}

public struct SoftwareTPMError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
#endif

#if TROUSSEAU_TEST_HOOKS
extension SoftwareTPM {
    /// With `TROUSSEAU_TEST_BACKEND=tpm` in the test process's environment, one swtpm for
    /// the whole process, whose dictionary-attack limit no test reaches: every keychain the
    /// harness makes (``CommandRunner/testEnvironment``'s daemons, ``EnclaveKeychain``) keeps
    /// its keys there, so a suite runs unchanged on the TPM backend (scripts/test's second
    /// pass). Nil otherwise.
    public static let suiteTPM: SoftwareTPM? = {
        guard ProcessInfo.processInfo.environment["TROUSSEAU_TEST_BACKEND"] == "tpm" else { return nil }
        do {
            let tpm = try SoftwareTPM()
            let setup = try tpm.tool("tpm2_dictionarylockout", ["--setup-parameters", "--max-tries=1000000", "--recovery-time=1", "--lockout-recovery-time=1"])
            guard setup.status == 0 else { throw SoftwareTPMError("tpm2_dictionarylockout: \(setup.stderr)") }
            atexit { SoftwareTPM.suiteTPM?.stop() }
            return tpm
        } catch {
            fatalError("TROUSSEAU_TEST_BACKEND=tpm, but no swtpm could be started: \(error)")
        }
    }()

    /// `TROUSSEAU_TPM` for the harness's keychains: the suite's swtpm, else "off".
    public static var suiteBackend: String { suiteTPM?.tcti ?? "off" }
}
#endif
