import FoundationEssentials
import GRDB
import KeychainCrypto
import KeychainModel

/// One row as read from a class table: plaintext identity columns and the two blobs.
struct StoredRow {
    static let columns = "rowid, uuid, agrp, pdmn, sync, tomb, pk, meta, secret"

    let rowID: Int64
    let identity: RowIdentity
    let metadata: Data
    let secret: Data

    /// The columns' names, in order (debug builds check each SELECT against them).
    static let columnNames = columns.split(separator: ", ").map(String.init)

    /// Reads a row selected as `SELECT \(columns) …` through GRDB (backups, sync): a column of
    /// another storage class than ours, or NULL, reads as errSecDecode. (GRDB's typed
    /// subscripts trap on a value they cannot convert in a row fetched whole.)
    init(_ row: Row, itemClass: ItemClass) throws {
        assert(Array(row.columnNames.prefix(9)) == Self.columnNames, "not a SELECT of StoredRow.columns")
        func value(_ index: Int) -> DatabaseValue.Storage { (row[index] as DatabaseValue).storage }
        func int64(_ index: Int) -> Int64? { if case .int64(let value) = value(index) { value } else { nil } }
        func text(_ index: Int) -> String? { if case .string(let value) = value(index) { value } else { nil } }
        func blob(_ index: Int) -> Data? { if case .blob(let value) = value(index) { value } else { nil } }
        try self.init(
            itemClass: itemClass, rowID: int64(0), uuid: blob(1), group: text(2), pdmn: text(3), sync: int64(4),
            tomb: int64(5), pk: blob(6), metadata: blob(7), secret: blob(8))
    }

    /// Reads a row selected as `SELECT \(columns) …` and stepped by the store (finds and the
    /// Secret Service's searches), with the same rule.
    init(_ row: StatementRow, itemClass: ItemClass) throws {
        try self.init(
            itemClass: itemClass, rowID: row.int64(0), uuid: row.blob(1), group: row.text(2), pdmn: row.text(3),
            sync: row.int64(4), tomb: row.int64(5), pk: row.blob(6), metadata: row.blob(7), secret: row.blob(8))
    }

    private init(
        itemClass: ItemClass, rowID: Int64?, uuid: Data?, group: String?, pdmn: String?, sync: Int64?, tomb: Int64?,
        pk: Data?, metadata: Data?, secret: Data?
    ) throws {
        guard let rowID, let uuidBytes = uuid, uuidBytes.count == 16, let group,
            let pdmn, let protection = ProtectionClass(rawValue: pdmn),
            let sync, let tomb, let pk, let metadata, let secret
        else {
            throw KeychainError.decode("a stored row is malformed")
        }
        let b = Array(uuidBytes)
        self.rowID = rowID
        self.identity = RowIdentity(
            itemClass: itemClass,
            uuid: UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                              b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])),
            accessGroup: group, protection: protection,
            synchronizable: sync != 0, tombstone: tomb != 0, primaryKeyToken: pk)
        self.metadata = metadata
        self.secret = secret
    }
}

extension UUID {
    /// The 16 bytes stored in the `uuid` column.
    var storedBytes: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }
}
