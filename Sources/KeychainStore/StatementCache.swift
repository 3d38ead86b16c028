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
    private struct State {
        /// The SQL of every statement handed out since the last overflow.
        var shapes: Set<String> = []
        /// The candidate lookups' SQL by shape (each also in `shapes`).
        var selects: [SelectShape: String] = [:]
    }

    private let state = BlockingMutex(State())
    private let limit: Int

    init(limit: Int = 512) {
        self.limit = limit
    }

    /// The connection's prepared statement for `sql`. Not for a statement already in use
    /// on the same connection (a cursor still open on it).
    func statement(_ sql: String, in db: Database) throws -> Statement {
        state.withLock { _ = $0.shapes.insert(sql) }
        return try db.cachedStatement(sql: sql)
    }

    /// The SQL of a candidate lookup of `shape`, built the first time the shape is seen
    /// (and counted among the shapes then, not hashed again on every request).
    func selectSQL(for shape: SelectShape) -> String {
        state.withLock { state in
            if let sql = state.selects[shape] { return sql }
            let sql = shape.sql
            state.selects[shape] = sql
            state.shapes.insert(sql)
            return sql
        }
    }

    /// A prepared lookup whose SQL came from ``selectSQL(for:)`` (already counted).
    func cachedSelect(_ sql: String, in db: Database) throws -> Statement {
        try db.cachedStatement(sql: sql)
    }

    /// Whether the caches hold too many shapes; true once per overflow, which the caller
    /// answers by releasing the pool's memory (outside any database access).
    func takeOverflow() -> Bool {
        state.withLock { state in
            guard state.shapes.count > limit else { return false }
            state = State()
            return true
        }
    }
}
