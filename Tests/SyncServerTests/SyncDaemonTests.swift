import Foundation
import KeychainTestSupport
import NIOSSL
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
        var signed = try SignedChain(account: id("acct"), founder: id("dev1"))
        let garbage = try await server.send("POST", "/v1/membership", token: token, body: MembershipEntry(index: 0, entry: Data("genesis".utf8)))
        #expect(garbage.status == 400 && error(garbage) == "invalid", "no member signed it")
        let appended = try await server.send("POST", "/v1/membership", token: token, body: signed.entries[0])
        #expect(appended.status == 201)
        let fork = try await server.send("POST", "/v1/membership", token: token, body: MembershipEntry(index: 0, entry: try signed.next(adding: "dev2").entry))
        #expect(fork.status == 409 && error(fork) == "membership-index")
        let chain = try await server.send("GET", "/v1/membership", token: token)
        #expect(try JSONDecoder().decode(MembershipResponse.self, from: chain.body).entries == signed.entries)
        #expect(try await server.send("POST", "/v1/membership", token: token, body: try signed.add("dev2")).status == 201)
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

    /// A device's socket hears of every write to its account; a stranger's is not upgraded and
    /// gets the HTTP route's 401 (a device with a credential but no upgrade: 426).
    @Test func aDevicesSocketHearsEachWriteAndAStrangersIsNotUpgraded() async throws {
        let server = try start(.sqlite, directory + "/sync.sqlite")
        try await register(server)
        let second = Data(repeating: 5, count: 32)
        #expect(try await server.send("POST", "/v1/devices", token: token, body: RegisterDeviceRequest(device: id("dev2"), token: second)).status == 201)
        let url = "ws://127.0.0.1:\(server.port)/v1/notify"
        let socket = try await NotifySocket(url, token: second)
        #expect(try await server.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [record("r1", 1)])).status == 200)
        #expect(try await next(socket.hints) == ChangeHint(zone: id("z1"), seq: 1))
        #expect(try await server.send("POST", "/v1/membership", token: token, body: try SignedChain(account: id("acct"), founder: id("dev1")).entries[0]).status == 201)
        #expect(try await next(socket.hints) == ChangeHint(zone: nil, seq: 0))
        await socket.close()

        let stranger = Data(repeating: 9, count: 32)
        await #expect(throws: (any Error).self) { _ = try await NotifySocket(url, token: stranger) }
        #expect(try await server.send("GET", "/v1/notify", token: stranger).status == 401)
        #expect(try await server.send("GET", "/v1/notify", token: token).status == 426)
        #expect(server.process.isRunning)

        // SIGTERM with a device's socket open: the server closes it (going away) and exits.
        let open = try await NotifySocket(url, token: second)
        kill(server.process.processIdentifier, SIGTERM)
        for _ in 0..<300 where server.process.isRunning { try await Task.sleep(for: .milliseconds(100)) }
        #expect(!server.process.isRunning, "trousseau-syncd did not exit within 30 s of SIGTERM with a socket open")
        #expect(try await next(open.hints) == nil)
        server.stop(signal: SIGKILL)
    }

    /// Two servers on one PostgreSQL database (as an operator runs several): a socket on one
    /// hears a write made through the other.
    @Test func twoServersOnOnePostgreSQLDatabaseShareHints() async throws {
        let location = try Backend.postgres.makeLocation()
        let first = try start(.postgres, location), second = try start(.postgres, location)
        try await register(first)
        let socket = try await NotifySocket("ws://127.0.0.1:\(first.port)/v1/notify", token: token)
        #expect(try await second.send("POST", "/v1/zones/z1/batch", token: token, body: BatchRequest(writes: [record("r1", 1)])).status == 200)
        #expect(try await next(socket.hints) == ChangeHint(zone: id("z1"), seq: 1))
        await socket.close()
        first.stop()
        second.stop()
    }

    /// With a certificate the server speaks HTTPS and WSS, TLS 1.3 only: curl (a client not
    /// ours) trusting that certificate alone opens an account and writes; plain HTTP on the
    /// port and TLS 1.2 get nothing.
    @Test func withACertificateDevicesSpeakTLS13Only() async throws {
        let certificate = directory + "/server.pem", key = directory + "/server.key"
        let made = try CommandRunner.run(executable: "/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=trousseau-syncd test", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let server = try SyncDaemonProcess(
            ["--database", directory + "/sync.sqlite", "--open-registration", "--certificate", certificate, "--private-key", key],
            log: directory + "/syncd-tls.log")
        let base = "https://127.0.0.1:\(server.port)"
        func curl(_ path: String, _ body: some Encodable, _ options: [String] = []) throws -> CommandResult {
            try CommandRunner.run(executable: "/usr/bin/curl", [
                "-sS", "--cacert", certificate, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
                "-H", "Authorization: Bearer " + token.base64EncodedString(), "--data-binary", "@-",
            ] + options + [base + path], input: String(decoding: try JSONEncoder().encode(body), as: UTF8.self))
        }
        let opened = try curl("/v1/accounts", RegisterAccountRequest(account: id("acct"), device: id("dev1"), token: token))
        #expect(opened.status == 0 && opened.stdout == "201", "\(opened.stdout) \(opened.stderr) \(server.logText)")

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate))
        let socket = try await NotifySocket("wss://localhost:\(server.port)/v1/notify", token: token, tls: tls)
        let written = try curl("/v1/zones/z1/batch", BatchRequest(writes: [record("r1", 1)]))
        #expect(written.stdout == "200", "\(written.stderr)")
        #expect(try await next(socket.hints) == ChangeHint(zone: id("z1"), seq: 1))
        await socket.close()

        let tls12 = try curl("/v1/zones/z1/batch", BatchRequest(writes: [record("r2", 1)]), ["--tls-max", "1.2"])
        #expect(tls12.status != 0 && tls12.stdout == "000", "\(tls12.stdout)")
        let plain = try CommandRunner.run(executable: "/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/v1/membership"])
        #expect(plain.status != 0 && plain.stdout == "000", "\(plain.stdout)")
        #expect(server.process.isRunning)
        server.stop()
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
        let halfTLS = try CommandRunner.run("trousseau-syncd", ["--database", directory + "/s.sqlite", "--certificate", directory + "/c.pem"])
        #expect(halfTLS.status != 0 && halfTLS.stderr.contains("--certificate and --private-key together"), "\(halfTLS.stderr)")
        let unreadable = try CommandRunner.run("trousseau-syncd", [
            "--host", "0.0.0.0", "--port", "0", "--database", directory + "/s.sqlite", "--certificate", directory + "/c.pem", "--private-key", directory + "/k.pem",
        ])
        #expect(unreadable.status != 0 && unreadable.stderr.contains("cannot read the certificate"), "\(unreadable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/s.sqlite"))
    }
}
