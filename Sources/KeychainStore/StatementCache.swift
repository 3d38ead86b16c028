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
    private struct State: Sendable {
        /// The SQL of every statement handed out since the last overflow.
        var shapes: Set<String> = []
        /// The candidate lookups' SQL by shape (each also in `shapes`).
        var selects = ShapeTable<SelectShape>()
        /// The Secret Service's reads' SQL by shape (each also in `shapes`).
        var secretService = ShapeTable<SecretServiceShape>()
    }

    /// SQL by shape, each text built once and counted among the shapes then.
    private struct ShapeTable<Shape: Hashable & Sendable>: Sendable {
        var texts: [Shape: String] = [:]

        mutating func sql(for shape: Shape, counting shapes: inout Set<String>, build: (Shape) -> String) -> String {
            if let sql = texts[shape] { return sql }
            let sql = build(shape)
            texts[shape] = sql
            shapes.insert(sql)
            return sql
        }
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
        state.withLock { $0.selects.sql(for: shape, counting: &$0.shapes) { $0.sql } }
    }

    /// The SQL of a Secret Service read of `shape`, built the first time the shape is seen.
    func secretServiceSQL(for shape: SecretServiceShape) -> String {
        state.withLock { $0.secretService.sql(for: shape, counting: &$0.shapes) { $0.sql } }
    }

    /// A prepared statement whose SQL came from ``selectSQL(for:)`` or
    /// ``secretServiceSQL(for:)`` (already counted).
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
