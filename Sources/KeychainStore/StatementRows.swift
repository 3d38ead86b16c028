import FoundationEssentials
import GRDB
import GRDBSQLite

extension Statement {
    /// Binds `values` to the statement's `?`s in order (each through GRDB's own binding for
    /// its type) and calls `body` with each row until it returns false or the rows end.
    ///
    /// The hot path of every find steps SQLite itself: GRDB's row cursor builds a
    /// case-insensitive dictionary of the column names on each call, and its arguments
    /// initialiser is generic code that cannot be specialised from here (together about a
    /// tenth of a find's instructions). GRDB's statement hooks are skipped, which a SELECT
    /// does not need: the store registers no observer of statement events and no trace.
    ///
    /// The statement is reset when this returns or throws, so no read snapshot outlives it.
    ///
    /// - Throws: GRDB's `DatabaseError` for what SQLite reports, as GRDB would.
    func forEachRow(binding values: [any DatabaseValueConvertible], _ body: (StatementRow) throws -> Bool) throws {
        let statement = sqliteStatement
        defer { sqlite3_reset(statement) }
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        guard values.count == Int(sqlite3_bind_parameter_count(statement)) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(values.count)", sql: sql)
        }
        for (index, value) in zip(CInt(1)..., values) {
            let code = value.bind(to: statement, at: index)
            guard code == SQLITE_OK else { throw error(code) }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                guard try body(StatementRow(statement: statement)) else { return }
            case SQLITE_DONE:
                return
            case let code:
                throw error(code)
            }
        }
    }

    private func error(_ code: CInt) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code),
            message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
    }
}

/// The current row of a statement stepped by ``GRDB/Statement/forEachRow(binding:_:)``,
/// read by column position. Each accessor is nil when the column does not hold a value of
/// that storage class (NULL included), so a malformed row reads as nil, not as a trap.
struct StatementRow {
    fileprivate let statement: SQLiteStatement

    func int64(_ column: CInt) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_INTEGER ? Int64(sqliteStatement: statement, index: column) : nil
    }

    func text(_ column: CInt) -> String? {
        sqlite3_column_type(statement, column) == SQLITE_TEXT ? String(sqliteStatement: statement, index: column) : nil
    }

    func blob(_ column: CInt) -> Data? {
        sqlite3_column_type(statement, column) == SQLITE_BLOB ? Data(sqliteStatement: statement, index: column) : nil
    }
}
