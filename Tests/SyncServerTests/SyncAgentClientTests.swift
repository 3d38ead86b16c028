import Foundation
import KeychainModel
import KeychainTestSupport
import SyncProtocol
import SyncTransport
import Testing

/// securityd's side of the sync agent against the real `trousseau-sync-agent` and a real
/// trousseau-syncd, and against an "agent" that sends what is not an event.
@Suite final class SyncAgentClientTests {
    let directory: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit { try? FileManagerLite.removeTree(directory) }

    static let token = Data(repeating: 7, count: 32)

    static func request(_ method: String, _ url: String, body: Data? = nil) -> SyncHTTPRequest {
        SyncHTTPRequest(method: method, url: url, authorization: SecretBytes(Array("Bearer \(token.base64EncodedString())".utf8)), body: body)
    }

    /// Waits until `pid` has exited (at most 10 s); whether it did.
    static func exited(_ pid: pid_t) -> Bool {
        for _ in 0..<1000 where DaemonControl.isRunning(pid) { usleep(10_000) }
        return !DaemonControl.isRunning(pid)
    }

    @Test func requestsGoThroughTheAgentAndAKilledOneIsReplaced() async throws {
        let server = try SyncDaemonProcess(["--database", directory + "/sync.sqlite", "--open-registration"], log: directory + "/syncd.log")
        let base = "http://127.0.0.1:\(server.port)"
        let agent = SyncAgentClient(executable: CommandRunner.productsDirectory.appendingPathComponent("trousseau-sync-agent").path, log: { _ in })
        defer { agent.stop() }
        #expect(agent.processID == nil, "an agent started before any request")

        let register = try JSONEncoder().encode(RegisterAccountRequest(account: SyncIdentifier("acct")!, device: SyncIdentifier("dev1")!, token: Self.token))
        #expect(try await agent.exchange(Self.request("POST", base + "/v1/accounts", body: register)).status == 201)
        let first = try #require(agent.processID)

        // Killed between requests: the next request goes to a new agent, not to an error.
        kill(first, SIGKILL)
        #expect(Self.exited(first))
        let membership = try await agent.exchange(Self.request("GET", base + "/v1/membership?after=-1"))
        #expect(membership.status == 200, "\(String(decoding: membership.body, as: UTF8.self))")
        #expect(try JSONDecoder().decode(MembershipResponse.self, from: membership.body).entries.isEmpty)
        let second = try #require(agent.processID)
        #expect(second != first)

        // A server that is not there: the agent's error, as an OSStatus.
        server.stop()
        do {
            _ = try await agent.exchange(Self.request("GET", base + "/v1/membership?after=-1"))
            Issue.record("a request to a stopped server succeeded")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.notAvailable)
        }
        #expect(agent.processID == second, "the agent died with its server")
    }

    /// An agent that sends what is not an event is killed, and the request waiting on it
    /// fails (errSecNotAvailable) instead of waiting for an answer that never comes (the
    /// "agent" sleeps for ten minutes after its nonsense).
    @Test func anAgentThatSpeaksNonsenseIsEnded() async throws {
        let script = directory + "/agent"
        // A frame of one byte, kind 9: no event has that kind.
        try "#!/bin/sh\nprintf '\\000\\000\\000\\001\\011' >&3\nexec sleep 600\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let lines = LogLines()
        let agent = SyncAgentClient(executable: script, log: { lines.append($0) })
        defer { agent.stop() }
        do {
            _ = try await agent.exchange(Self.request("GET", "http://127.0.0.1:9/v1/membership?after=-1"))
            Issue.record("a request through a nonsensical agent succeeded")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.notAvailable)
        }
        for _ in 0..<1000 where agent.processID != nil { usleep(10_000) }
        #expect(agent.processID == nil)
        #expect(lines.all.contains { $0.contains("no sync agent event has kind 9") }, "\(lines.all)")
    }
}

/// Log lines, from any thread.
final class LogLines: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
