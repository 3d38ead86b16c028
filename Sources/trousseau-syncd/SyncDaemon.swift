import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import SyncServer

/// trousseau-syncd: the server that relays a user's devices' encrypted records. It stores
/// ciphertext under random ids and never holds a key (docs/SECURITY.md, "Sync").
@main
struct SyncDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trousseau-syncd",
        abstract: "Relay encrypted keychain records between a user's devices.",
        discussion: """
            One SQLite file by default (nothing to set up); --postgres for a PostgreSQL database \
            shared by several instances. With --certificate and --private-key it serves HTTPS \
            (TLS 1.3) on any address; without them, plain HTTP on loopback only (behind a \
            TLS-terminating proxy). Devices keep a WebSocket on /v1/notify for change hints.
            """)

    @Option(help: "The address to listen on (loopback only without --certificate).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed when listening).")
    var port = 8443

    @Option(help: "The SQLite database file (created if missing).")
    var database: String?

    @Option(help: "A PostgreSQL URL instead: postgres://user:password@host:port/database or postgres+uds://user@localhost/socket/path#database.")
    var postgres: String?

    @Option(help: "The server's certificate chain, PEM (serves HTTPS).")
    var certificate: String?

    @Option(help: "The certificate's private key, PEM.")
    var privateKey: String?

    @Flag(help: "Let anyone who reaches the server open an account.")
    var openRegistration = false

    @Option(help: ArgumentHelp(
        "Seconds a connection may take to send a request's head, or stay silent between requests, before it is closed (hint sockets are kept by pings instead).",
        valueName: "seconds"))
    var idleTimeout: Double = 30

    func validate() throws {
        guard (database == nil) != (postgres == nil) else {
            throw ValidationError("give either --database FILE or --postgres URL")
        }
        guard (certificate == nil) == (privateKey == nil) else {
            throw ValidationError("give --certificate and --private-key together")
        }
        guard certificate != nil || ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw ValidationError("plain HTTP is served on loopback only; \(host) would carry credentials in the clear (give --certificate and --private-key)")
        }
        guard idleTimeout > 0, idleTimeout <= 3600 else {
            throw ValidationError("--idle-timeout is more than 0 and at most 3600 seconds")
        }
    }

    /// The TLS configuration of --certificate and --private-key, read before anything else
    /// is opened; nil without them.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard let certificate, let privateKey else { return nil }
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
            key = try NIOSSLPrivateKey(file: privateKey, format: .pem)
        } catch {
            throw ValidationError("cannot read the certificate or its key: \(error)")
        }
        guard !chain.isEmpty else { throw ValidationError("\(certificate) holds no certificate") }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv13  // every client is ours
        return tls
    }

    func run() async throws {
        let tls = try tlsConfiguration()
        umask(0o077)  // the database and its WAL are the user's alone
        var logger = Logger(label: "trousseau-syncd")
        logger.logLevel = .info
        let store: SQLSyncStore =
            if let postgres {
                try await SQLSyncStore.postgres(url: postgres, logger: logger)
            } else {
                try await SQLSyncStore.sqlite(path: database!, logger: logger)
            }
        let routes = SyncRoutes(store: store, openRegistration: openRegistration)
        // HTTP/1.1 with the WebSocket upgrade (devices send nothing on the socket but control
        // frames), inside TLS when given a certificate. Hummingbird closes no idle connection
        // unless told: a connection silent between requests is closed after the idle timeout,
        // and one whose first request's head has not arrived by then (RequestHeadDeadline).
        // The WebSocket's pings (every 30 s, closed when unanswered) guard hint sockets.
        let timeout = TimeAmount.nanoseconds(Int64(idleTimeout * 1_000_000_000))
        let webSocketResponder = routes.webSocketRouter().buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(idleTimeout: timeout), ws: .init(maxFrameSize: 4096))
        let server = HTTPServerBuilder { responder in
            let http = RequestHeadDeadlineChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                timeout: timeout)
            // TLS outside the deadline's handler: the deadline runs from the connection's
            // start (a stalled handshake too) and reads the head in plaintext.
            guard let tls else { return http }
            return try TLSChannel(http, tlsConfiguration: tls)
        }
        let scheme = tls == nil ? "http" : "https"
        let app = Application(
            router: routes.router(),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "trousseau-syncd"),
            onServerRunning: { channel in
                // Tests and scripts wait for this line to learn the port.
                let line = "trousseau-syncd: listening on \(scheme)://\(host):\(channel.localAddress?.port ?? port)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger)
        do {
            try await app.runService()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}
