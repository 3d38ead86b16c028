import Foundation

/// The outcome of running a command: exit status, standard output and standard error.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// Runs the package's built executables end to end.
public enum CommandRunner {
    /// The directory holding the built products (beside the running test bundle).
    public static var productsDirectory: URL {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }

    /// Runs `product` with `arguments`, `environment` added to this process's, and `input`
    /// on standard input.
    public static func run(
        _ product: String, _ arguments: [String], environment: [String: String] = [:], input: String = ""
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent(product)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }
}
