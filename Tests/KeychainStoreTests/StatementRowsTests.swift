import FoundationEssentials
import GRDB
@testable import KeychainStore
import Testing

/// The store's own stepping of a statement (`Statement.forEachRow`): values bound in
/// order, each column read only as its own storage class.
@Suite struct StatementRowsTests {
    @Test func eachColumnReadsOnlyAsItsStorageClass() throws {
        let db = try DatabaseQueue()
        try db.read { db in
            let statement = try db.makeStatement(sql: "SELECT x'', 'abc', 42, NULL, 1.5, x'0102', ?, ?, ?")
            var rows = 0
            try statement.forEachRow(binding: ["bound", Int64(-7), Data([9, 8])]) { row in
                rows += 1
                #expect(row.blob(0) == Data(), "a zero-length blob is empty data, not NULL")
                #expect(row.text(0) == nil && row.int64(0) == nil)
                #expect(row.text(1) == "abc" && row.blob(1) == nil && row.int64(1) == nil)
                #expect(row.int64(2) == 42 && row.text(2) == nil && row.blob(2) == nil)
                #expect(row.int64(3) == nil && row.text(3) == nil && row.blob(3) == nil)
                #expect(row.int64(4) == nil && row.text(4) == nil && row.blob(4) == nil)
                #expect(row.blob(5) == Data([1, 2]))
                #expect(row.text(6) == "bound" && row.int64(7) == -7 && row.blob(8) == Data([9, 8]))
                return true
            }
            #expect(rows == 1)
        }
    }

    @Test func theWrongNumberOfValuesIsRefusedAndStoppingEarlyEndsTheRows() throws {
        let db = try DatabaseQueue()
        try db.read { db in
            let statement = try db.makeStatement(sql: "SELECT value FROM (SELECT 1 AS value UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE value >= ?")
            #expect(throws: DatabaseError.self) { try statement.forEachRow(binding: []) { _ in true } }
            var seen: [Int64] = []
            try statement.forEachRow(binding: [Int64(2)]) { row in
                seen.append(row.int64(0)!)
                return false
            }
            #expect(seen == [2])
            // Run again from the start: the early stop reset the statement.
            seen = []
            try statement.forEachRow(binding: [Int64(1)]) { row in
                seen.append(row.int64(0)!)
                return true
            }
            #expect(seen == [1, 2, 3])
        }
    }
}
