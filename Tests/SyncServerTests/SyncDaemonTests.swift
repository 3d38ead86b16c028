import Foundation
import KeychainTestSupport
import SyncProtocol
import Testing

/// trousseau-syncd as a real process on loopback, spoken to over HTTP as a device would.
@Suite final class SyncDaemonTests {
    let directory: String
    let token = Data((0..<32).map { UInt8($0) })

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit {
        try? FileManagerLite.removeTree(directory)
    }

    func start(_ backend: Backend, _ location: String, open: Bool = true) throws -> SyncDaemonProcess {
        let database = backend == .sqlite ? ["--database", location] : ["--postgres", location]
        return try SyncDaemonProcess(database + (open ? ["--open-registration"] : []), log: directory + "/syncd-\(UUID().uuidString).log")
    }

    func register(_ server: SyncDaemonProcess) async throws {
        let made = try await server.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: id("acct"), device: id("dev1"), token: token))
        #expect(made.status == 201, "\(String(decoding: made.body, as: UTF8.self)) \(server.logText)")
    }

    @Test(arguments: Backend.available)
    func devicesWriteAndReadThroughTheAPIAndAnAcknowledgedWriteSurvivesKill9(_ backend: Backend) async throws {
        let location = try backend == .sqlite ? directory + "/sync.sqlite" : backend.makeLocation()
        var server = try start(backend, location)
        try await register(server)
        let written = try await server.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [record("r1", 1, "sealed")]))
        #expect(written.status == 200)
        #expect(try JSONDecoder().decode(BatchResponse.self, from: written.body) == BatchResponse(seqs: [1]))
        // Killed right after the answer: the write was acknowledged, so it must be there.
        server.stop(signal: SIGKILL)
        server = try start(backend, location)
        let read = try await server.send("GET", "/v1/zones/z1/changes?after=0", token: token)
        #expect(read.status == 200)
        let changes = try JSONDecoder().decode(ChangesResponse.self, from: read.body)
        #expect(changes.records.map(\.body) == [Data("sealed".utf8)] && changes.high == 1 && !changes.more)
        server.stop()
    }

    @Test func badRequestsGetTheirStatusAndTheServerServesOn() async throws {
        let server = try start(.sqlite, directory + "/sync.sqlite")
        try await register(server)
        func error(_ answer: (status: Int, body: Data)) -> String {
            (try? JSONDecoder().decode(SyncErrorBody.self, from: answer.body).error) ?? String(decoding: answer.body, as: UTF8.self)
        }
        let again = try await server.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: id("acct"), device: id("dev2"), token: Data(repeating: 7, count: 32)))
        #expect(again.status == 409 && error(again) == "account-exists")
        let shortToken = try await server.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: id("acct2"), device: id("dev2"), token: Data(count: 8)))
        #expect(shortToken.status == 400)
        let anonymous = try await server.send("GET", "/v1/zones/z1/changes")
        #expect(anonymous.status == 401 && error(anonymous) == "unauthorized")
        let stranger = try await server.send("GET", "/v1/zones/z1/changes", token: Data(repeating: 9, count: 32))
        #expect(stranger.status == 401)
        #expect(try await server.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [record("r1", 1)])).status == 200)
        let stale = try await server.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [record("r1", 1), record("r2", 1)]))
        #expect(stale.status == 409)
        #expect(try JSONDecoder().decode(BatchConflict.self, from: stale.body) == BatchConflict(conflicts: [.init(record: id("r1"), serverVersion: 1)]))
        #expect(try await server.send("POST", "/v1/zones/z1/batch", token: token, json: Data("{\"writes\": [{\"garbage".utf8)).status == 400)
        #expect(try await server.send("POST", "/v1/zones/bad.zone/batch", token: token, body: BatchRequest(writes: [record("r9", 1)])).status == 400)
        #expect(try await server.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [])).status == 400)
        #expect(try await server.send("GET", "/v1/zones/z1/changes?after=abc", token: token).status == 400)
        let huge = try await server.send("POST", "/v1/zones/z1/batch", token: token, json: Data(count: SyncLimits.requestBody + 1))
        #expect(huge.status == 413)
        let appended = try await server.send("POST", "/v1/membership", token: token, body: MembershipEntry(index: 0, entry: Data("genesis".utf8)))
        #expect(appended.status == 201)
        let fork = try await server.send("POST", "/v1/membership", token: token, body: MembershipEntry(index: 0, entry: Data("fork".utf8)))
        #expect(fork.status == 409 && error(fork) == "membership-index")
        let chain = try await server.send("GET", "/v1/membership", token: token)
        #expect(try JSONDecoder().decode(MembershipResponse.self, from: chain.body).entries == [MembershipEntry(index: 0, entry: Data("genesis".utf8))])
        // A second device, then its own reads.
        let second = Data(repeating: 5, count: 32)
        #expect(try await server.send("POST", "/v1/devices", token: token, body: RegisterDeviceRequest(device: id("dev2"), token: second)).status == 201)
        let seen = try await server.send("GET", "/v1/zones/z1/changes?after=0&limit=1", token: second)
        #expect(try JSONDecoder().decode(ChangesResponse.self, from: seen.body).records.map(\.record) == [id("r1")])
        #expect(server.process.isRunning)
        // The credential is kept only as its hash.
        server.stop()
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("sync.sqlite") }
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            #expect(bytes.range(of: token) == nil && bytes.range(of: second) == nil, "\(file) holds a device credential")
        }
    }

    @Test func accountsAreOpenedOnlyWhenTheServerSaysSo() async throws {
        let server = try start(.sqlite, directory + "/sync.sqlite", open: false)
        let refused = try await server.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: id("acct"), device: id("dev1"), token: token))
        #expect(refused.status == 403)
        server.stop()
    }

    @Test func plainHTTPOffLoopbackAndTwoDatabasesAreRefusedAtStart() throws {
        let offLoopback = try CommandRunner.run("trousseau-syncd", ["--host", "0.0.0.0", "--database", directory + "/s.sqlite"])
        #expect(offLoopback.status != 0 && offLoopback.stderr.contains("loopback only"), "\(offLoopback.stderr)")
        let both = try CommandRunner.run("trousseau-syncd", ["--database", directory + "/s.sqlite", "--postgres", "postgres://x@localhost/db"])
        #expect(both.status != 0 && both.stderr.contains("either --database FILE or --postgres URL"), "\(both.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/s.sqlite"))
    }
}
