import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
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
        // frames), inside TLS when given a certificate.
        var server = HTTPServerBuilder.http1WebSocketUpgrade(
            webSocketRouter: routes.webSocketRouter(), configuration: .init(ws: .init(maxFrameSize: 4096)))
        if let tls { server = try .tls(server, tlsConfiguration: tls) }
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
