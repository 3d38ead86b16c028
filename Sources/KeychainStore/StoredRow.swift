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

    /// Reads a row selected as `SELECT \(columns) …`; a plaintext column that is not of our
    /// format reads as errSecDecode. Columns are read by position: GRDB's lookup by name
    /// (case-insensitive, per column) cost about 2,900 instructions of a find.
    init(_ row: Row, itemClass: ItemClass) throws {
        assert(Array(row.columnNames.prefix(9)) == Self.columns.split(separator: ", ").map(String.init), "not a SELECT of StoredRow.columns")
        guard let rowID = row[0] as Int64?,
            let uuidBytes = row[1] as Data?, uuidBytes.count == 16,
            let group = row[2] as String?,
            let pdmn = row[3] as String?, let protection = ProtectionClass(rawValue: pdmn),
            let sync = row[4] as Int64?, let tomb = row[5] as Int64?,
            let pk = row[6] as Data?,
            let metadata = row[7] as Data?, let secret = row[8] as Data?
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
