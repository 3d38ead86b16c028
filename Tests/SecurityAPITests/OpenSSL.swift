import Foundation

/// The `openssl` and `python3` commands, for interoperability checks against implementations
/// that are not ours.
enum OpenSSL {
    struct Result {
        let status: Int32
        let output: String
    }

    /// Runs `openssl arguments…` in `directory`.
    static func run(_ arguments: [String], in directory: URL? = nil) throws -> Result {
        try execute("/usr/bin/openssl", arguments, in: directory)
    }

    /// Runs `python3 -c script arguments…` in `directory`.
    static func python(_ script: String, _ arguments: [String] = [], in directory: URL? = nil) throws -> Result {
        try execute("/usr/bin/python3", ["-c", script] + arguments, in: directory)
    }

    static func execute(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A new empty directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("seckey-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
