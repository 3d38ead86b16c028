import KeychainModel
import Logging
import PostgresKit

/// Carries change hints between server instances that share one PostgreSQL database: each
/// write sends `NOTIFY trousseau_sync` in its transaction (delivered at commit, never for a
/// rolled-back batch), and every instance LISTENs on a connection of its own and publishes
/// what arrives to its sockets — its own writes included, so there is one path for all.
///
/// A dropped connection is made again (backing off to 30 s); hints sent meanwhile are lost,
/// which devices survive because they pull when they reconnect and at a slow poll.
final class PostgresHintListener: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var task: Task<Void, Never>?
        var closed = false
    }

    private let state = BlockingMutex(State())

    /// Connects and LISTENs before returning, so a write made after this is hinted; throws
    /// if the first connection fails (the server should not start half working).
    static func start(configuration: PostgresConnection.Configuration, hints: ChangeHints, logger: Logger) async throws -> PostgresHintListener {
        let listener = PostgresHintListener()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: (any Error)?.self)
        let task = Task {
            var failures = 0
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
                    guard listener.state.withLock({ state in
                        state.connection = connection
                        return !state.closed
                    }) else {
                        try? await connection.close()
                        return
                    }
                    try await connection.listen(on: ChangeHints.channel) { notifications in
                        readyContinuation.yield(nil)
                        failures = 0
                        for try await notification in notifications {
                            if let (account, hint) = ChangeHints.parse(notification.payload) { hints.publish(hint, account: account) }
                        }
                    }
                    try? await connection.close()
                } catch {
                    readyContinuation.yield(error)
                    if listener.state.withLock({ $0.closed }) { return }
                    logger.warning("trousseau-syncd: the PostgreSQL hint listener lost its connection; retrying", metadata: ["error": "\(error)"])
                }
                failures += 1
                try? await Task.sleep(for: .seconds(min(30, 1 << min(failures, 5))))
            }
        }
        listener.state.withLock { $0.task = task }
        for await outcome in ready {
            if let outcome {
                await listener.close()
                throw outcome
            }
            break
        }
        readyContinuation.finish()  // later outcomes are the log's
        return listener
    }

    /// Stops listening and closes the connection.
    func close() async {
        let (connection, task) = state.withLock { state in
            state.closed = true
            return (state.connection, state.task)
        }
        task?.cancel()
        try? await connection?.close()
        await task?.value
    }
}
