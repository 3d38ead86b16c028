import GRDB
import KeychainModel

/// Bounds the prepared statements SQLite connections keep.
///
/// Preparing a statement costs more than running it (the parser, and GRDB's authorizer
/// on every column), so the store reuses prepared statements from each connection's cache.
/// Statements are shaped by the query (which token columns, how many groups), so a caller
/// sending ever new shapes could grow the caches without end; after `limit` distinct
/// shapes the caches are emptied and start again.
final class StatementCache: Sendable {
    private let shapes = BlockingMutex<Set<String>>([])
    private let limit: Int

    init(limit: Int = 512) {
        self.limit = limit
    }

    /// The connection's prepared statement for `sql`. Not for a statement already in use
    /// on the same connection (a cursor still open on it).
    func statement(_ sql: String, in db: Database) throws -> Statement {
        shapes.withLock { _ = $0.insert(sql) }
        return try db.cachedStatement(sql: sql)
    }

    /// Whether the caches hold too many shapes; true once per overflow, which the caller
    /// answers by releasing the pool's memory (outside any database access).
    func takeOverflow() -> Bool {
        shapes.withLock { shapes in
            guard shapes.count > limit else { return false }
            shapes.removeAll()
            return true
        }
    }
}
