import Foundation
import KeychainTestSupport
import Testing

/// Device homes for end-to-end sync tests: each a KEYCHAIN_HOME with its own securityd and
/// enclave (started by `security` on demand, stopped at the end), driven as a user would.
final class SyncDeviceHomes: @unchecked Sendable {
    let directory: String
    let homes: [String]

    deinit {
        for home in homes { DaemonControl.stop(home: home) }
        try? FileManagerLite.removeTree(directory)
    }

    var indices: Range<Int> { homes.indices }

    /// Whether each device's securityd runs rounds by itself (after changes, on hints, on its
    /// timer); otherwise only `security sync now` does, so a test decides when each runs.
    let automatic: Bool

    /// More of every device's environment (a daemon setting a test needs).
    let extraEnvironment: [String: String]

    init(_ names: [String], automatic: Bool = false, environment: [String: String] = [:]) throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        self.directory = directory
        self.automatic = automatic
        self.extraEnvironment = environment
        homes = names.map { directory + "/device-" + $0 }
    }

    func environment(_ device: Int) -> [String: String] {
        [
            "KEYCHAIN_HOME": homes[device], "TROUSSEAU_SECURITYD_LOG": homes[device] + ".log",
            // Automatic: a timer long enough that only a change or a hint explains a round.
            "TROUSSEAU_SYNC_INTERVAL_SECONDS": automatic ? "3600" : "0",
        ].merging(extraEnvironment) { $1 }
    }

    func security(_ device: Int, _ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: environment(device).merging(extra) { $1 }, input: input)
    }

    /// `keychain-example` (an app written against SecItem) on `device`.
    func app(_ device: Int, _ arguments: [String]) throws -> CommandResult {
        try CommandRunner.run("keychain-example", arguments, environment: environment(device))
    }

    /// A trousseau-syncd on SQLite in this directory, open to new accounts.
    func server(port: Int? = nil) throws -> SyncDaemonProcess {
        try SyncDaemonProcess(
            ["--database", directory + "/server.sqlite", "--open-registration"] + (port.map { ["--port", "\($0)"] } ?? []), log: directory + "/syncd.log")
    }

    /// The device is lost: its daemons stopped, its home deleted.
    func forget(_ device: Int) {
        DaemonControl.stop(home: homes[device])
        try? FileManagerLite.removeTree(homes[device])
    }

    /// `member` shows a code and approves (`pair --approve`); `newcomer` joins with it,
    /// read from its standard input. Answers both commands' outcomes.
    @discardableResult
    func pair(_ member: Int, _ newcomer: Int, server url: String) throws -> (joined: CommandResult, paired: (status: Int32, stdout: String, stderr: String)) {
        let pairing = try RunningCommand("security", ["sync", "pair", "--approve"], environment: environment(member))
        let codeLine = pairing.readLine()
        let code = codeLine.hasPrefix("code: ") ? String(codeLine.dropFirst("code: ".count)) : ""
        let joined = try security(newcomer, ["sync", "join", "--server", url, "-"], input: code + "\n")
        let paired = pairing.finish()
        #expect(joined.status == 0 && paired.status == 0, "\(codeLine) \(joined.stderr) \(paired.stderr)")
        return (joined, paired)
    }

    /// The synchronizable generic password of `account` and `service` on `device`, or nil.
    func password(_ device: Int, _ account: String, service: String) throws -> String? {
        let found = try security(device, ["find-generic-password", "--synchronizable", "-a", account, "-s", service, "-w"])
        return found.status == 0 ? String(found.stdout.dropLast()) : nil
    }

    /// What `device`'s securityd wrote to its log, for a failure's message.
    func log(_ device: Int) -> String {
        (try? String(contentsOfFile: homes[device] + ".log", encoding: .utf8)) ?? ""
    }

    /// Rounds on every device (or on `only`) until one pass moves nothing (at most four passes).
    func roundsUntilQuiet(only: [Int]? = nil) throws {
        for _ in 0..<4 {
            var moved = false
            for device in only ?? Array(homes.indices) {
                let round = try security(device, ["sync", "now"])
                #expect(round.status == 0, "\(round.stderr)")
                moved = moved || !round.stdout.hasPrefix("received 0, sent 0,")
            }
            if !moved { return }
        }
    }
}

/// A command left running while the test does something else: its first line of output is
/// read as soon as it is written.
final class RunningCommand: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()
    var buffered = Data()

    init(_ product: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = CommandRunner.productsDirectory.appendingPathComponent(product)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(CommandRunner.testEnvironment) { _, new in new }.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The next line of standard output, without its newline ("" at its end).
    func readLine() -> String {
        while !buffered.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffered += chunk
        }
        let line = buffered.prefix { $0 != UInt8(ascii: "\n") }
        buffered = Data(buffered.dropFirst(line.count + 1))
        return String(decoding: line, as: UTF8.self)
    }

    /// Waits for it to exit: its status, the rest of its output, and its standard error.
    func finish() -> (status: Int32, stdout: String, stderr: String) {
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: buffered + rest, as: UTF8.self), String(decoding: errorText, as: UTF8.self))
    }
}
