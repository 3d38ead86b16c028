import ArgumentParser
import Foundation
import Hummingbird
import Logging
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
            shared by several instances. Plain HTTP is served on loopback only.
            """)

    @Option(help: "The address to listen on (loopback only for now).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed when listening).")
    var port = 8443

    @Option(help: "The SQLite database file (created if missing).")
    var database: String?

    @Option(help: "A PostgreSQL URL instead: postgres://user:password@host:port/database or postgres+uds://user@localhost/socket/path#database.")
    var postgres: String?

    @Flag(help: "Let anyone who reaches the server open an account.")
    var openRegistration = false

    func validate() throws {
        guard (database == nil) != (postgres == nil) else {
            throw ValidationError("give either --database FILE or --postgres URL")
        }
        guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw ValidationError("plain HTTP is served on loopback only; \(host) would carry credentials in the clear")
        }
    }

    func run() async throws {
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
        let app = Application(
            router: routes.router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "trousseau-syncd"),
            onServerRunning: { channel in
                // Tests and scripts wait for this line to learn the port.
                let line = "trousseau-syncd: listening on http://\(host):\(channel.localAddress?.port ?? port)\n"
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
