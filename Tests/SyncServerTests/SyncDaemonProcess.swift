import Foundation
import HummingbirdWSClient
import KeychainTestSupport
import Logging
import NIOSSL
import SyncProtocol

/// trousseau-syncd as a process of its own on a free loopback port, its log in a file.
final class SyncDaemonProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let log: String

    /// Starts the server with `arguments` after `--host 127.0.0.1 --port 0` and waits for
    /// the line that names its port.
    init(_ arguments: [String], log: String) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("trousseau-syncd")
        process.arguments = ["--host", "127.0.0.1", "--port", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        var seen = Data()
        while !seen.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // it exited
            seen += chunk
        }
        let line = String(decoding: seen, as: UTF8.self)
        guard let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            process.waitUntilExit()
            throw SyncTestError(description: "trousseau-syncd did not start: \(line) \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        self.port = port
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// SIGTERM (a clean stop) or SIGKILL, and waits for it to exit.
    func stop(signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    deinit { stop(signal: SIGKILL) }

    /// Sends one request; answers the status and the body.
    func send(_ method: String, _ path: String, token: Data? = nil, json: Data? = nil) async throws -> (status: Int, body: Data) {
        try await send(method, path, authorization: token.map { "Bearer " + $0.base64EncodedString() }, json: json)
    }

    /// Sends one request with `authorization` as it is (`Bearer …`, `Pairing …`).
    func send(_ method: String, _ path: String, authorization: String?, json: Data? = nil) async throws -> (status: Int, body: Data) {
        try await loopbackRequest(port: port, method, path, authorization: authorization, json: json)
    }

    func send(_ method: String, _ path: String, token: Data? = nil, body: some Encodable) async throws -> (status: Int, body: Data) {
        try await send(method, path, token: token, json: try JSONEncoder().encode(body))
    }
}

struct SyncTestError: Error, CustomStringConvertible {
    let description: String
}

/// A device's WebSocket on `/v1/notify`: the hints as they come, opened once the server said
/// ``ChangeHint/subscribed``.
final class NotifySocket: Sendable {
    let hints: AsyncStream<ChangeHint>
    private let closing: AsyncStream<Void>.Continuation
    let connection: Task<Void, any Error>

    /// Connects with `token`; throws if the server does not upgrade or says nothing first.
    init(_ url: String, token: Data, tls: TLSConfiguration? = nil) async throws {
        let (hints, received) = AsyncStream.makeStream(of: ChangeHint.self)
        let (closeRequests, closing) = AsyncStream.makeStream(of: Void.self)
        self.hints = hints
        self.closing = closing
        connection = Task {
            defer { received.finish() }
            try await WebSocketClient.connect(
                url: url, configuration: .init(additionalHeaders: [.authorization: "Bearer " + token.base64EncodedString()]),
                tlsConfiguration: tls, logger: Logger(label: "test")
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 4096) {
                            guard case .text(let text) = message else { continue }
                            received.yield(try JSONDecoder().decode(ChangeHint.self, from: Data(text.utf8)))
                        }
                    }
                    group.addTask {
                        for await _ in closeRequests { break }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
        guard try await next(hints) == .subscribed else {
            try await connection.value  // the client's error, if it had one
            throw SyncTestError(description: "the socket closed before it was subscribed")
        }
    }

    func close() async {
        closing.yield()
        _ = try? await connection.value
    }
}
