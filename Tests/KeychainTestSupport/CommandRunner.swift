// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation

/// The outcome of running a command: exit status, standard output and standard error.
public struct CommandResult: Sendable {
    public let status: Int32
    /// Standard output and error as bytes, for byte-for-byte comparisons.
    public let standardOutput: Data
    public let standardError: Data

    /// Standard output and error as text (invalid UTF-8 repaired).
    public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    public var stderr: String { String(decoding: standardError, as: UTF8.self) }
}

/// Runs the package's built executables end to end.
public enum CommandRunner {
    /// The directory holding the built products (beside the running test bundle).
    public static var productsDirectory: URL {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }

    /// What every test run adds to the environment: daemons it starts exit after 30 idle
    /// seconds, derive passcodes cheaply (test-only), and keep device keys in software, or in
    /// the suite's swtpm (``SoftwareTPM/suiteTPM``) — never the machine's TPM, whose
    /// dictionary-attack counter no test's wrong passcode may reach. A test that wants a TPM
    /// of its own names it.
    public static let testEnvironment = [
        "TROUSSEAU_SECURITYD_IDLE_SECONDS": "30",
        "TROUSSEAU_UNSAFE_FAST_KDF": "1",
        "TROUSSEAU_TPM": SoftwareTPM.suiteBackend,
    ]

    /// Runs `product` with `arguments`, `environment` added to this process's, and `input`
    /// on standard input.
    public static func run(
        _ product: String, _ arguments: [String], environment: [String: String] = [:], input: String = ""
    ) throws -> CommandResult {
        try run(executable: productsDirectory.appendingPathComponent(product).path, arguments, environment: environment, input: input)
    }

    /// This process's environment without the test variables (for builds and installs run
    /// from a test).
    public static var hostEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TROUSSEAU_") && $0.key != "KEYCHAIN_HOME" }
    }

    /// Runs the executable at `executable` (for example a copy of a product elsewhere).
    ///
    /// - Parameters:
    ///   - clearing: when true the child gets `environment` alone, nothing of this process's.
    ///   - workingDirectory: where it runs (this process's directory when nil).
    public static func run(
        executable: String, _ arguments: [String], environment: [String: String] = [:], input: String = "", clearing: Bool = false,
        in workingDirectory: String? = nil
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment =
            clearing
            ? environment
            : ProcessInfo.processInfo.environment
                .merging(testEnvironment) { _, new in new }
                .merging(environment) { _, new in new }
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        ignoreBrokenPipes
        try launch(process)
        // A child that exits without reading its input closes the pipe: EPIPE, not a crash.
        try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
        // Standard error on a thread of its own (not the cooperative pool, which callers may
        // be blocking): a child filling one pipe while we wait on the other would never finish.
        let errorData = DataBox()
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
            errorRead.signal()
        }.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        errorRead.wait()
        let err = errorData.get()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, standardOutput: out, standardError: err)
    }
}

extension CommandRunner {
    /// Ignores SIGPIPE in the test process, once: writing the input of a child that has
    /// already exited (a loaded machine) would otherwise end the whole test run.
    static let ignoreBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Copies the executable at `source` to `destination` (see `writeExecutable`).
    public static func copyExecutable(_ source: String, to destination: String) throws {
        try writeExecutable(Data(contentsOf: URL(fileURLWithPath: source)), to: destination)
    }

    /// Writes a new executable file through a descriptor that no child spawned meanwhile
    /// keeps across its exec (Foundation's writers leave theirs inheritable).
    public static func writeExecutable(_ contents: Data, to destination: String) throws {
        let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        try FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(contentsOf: contents)
    }

    /// Starts `process`, again while its executable is busy. A file just written is "busy"
    /// (ETXTBSY) while any process holds it open for writing: a child another test thread
    /// forked inherits the writer's descriptors until its own exec closes them.
    static func launch(_ process: Process) throws {
        for attempt in 0... {
            do {
                return try process.run()
            } catch where attempt < 100 && isTextFileBusy(error) {
                usleep(10_000)
            }
        }
    }

    private static func isTextFileBusy(_ error: any Error) -> Bool {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return error.code == Int(ETXTBSY) }
        return (error.userInfo[NSUnderlyingErrorKey] as? NSError).map(isTextFileBusy) ?? false
    }
}

private final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

/// Stops the securityd of a test keychain (its pid is in the daemon lock file) and waits
/// for it to exit.
public enum DaemonControl {
    public static func pid(home: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: home + "/securityd.lock", encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public static func stop(home: String) {
        // Only a securityd of this home: the pid may be stale and reused by now.
        guard let pid = pid(home: home), isDaemon(pid, home: home), kill(pid, SIGTERM) == 0 else { return }
        for _ in 0..<400 where isRunning(pid) {
            usleep(5_000)
        }
    }

    /// Whether `pid` is a running securityd serving `home`.
    public static func isDaemon(_ pid: pid_t, home: String) -> Bool {
        guard isRunning(pid), let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let words = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return words.first?.hasSuffix("/securityd") == true && words.contains(home)
    }

    /// Whether `pid` runs: exists and is not a zombie waiting for init to reap it. A killed
    /// process's main thread turns zombie before its other threads have exited and closed
    /// its descriptors (its socket still accepts): it runs until they are gone.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z" || threads > 1
    }
}
#endif
