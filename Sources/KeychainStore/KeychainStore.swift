import FoundationEssentials
import GRDB
import KeychainCrypto
public import KeychainModel
import KeychainSystem
public import EnclaveProtocol
public import KeychainCallers

#if canImport(Glibc)
import Glibc
#endif

/// The encrypted item store: one SQLite database (WAL) in `KEYCHAIN_HOME`, one table per
/// item class, queried with the iOS data-protection keychain's `SecItem` semantics.
///
/// Only access group, protection class, sync, tombstone, the row's UUID and keyed tokens
/// are stored in plaintext; attributes and secrets are AES-256-GCM blobs bound to their
/// row (see ARCHITECTURE.md, "Item encryption").
public final class KeychainStore: Sendable {
    let database: DatabasePool
    /// Connections for single-statement reads, outside the pool (``readStatement(_:)``).
    let readers: ReaderConnections
    let keybag: any Keybag
    let blindIndex: BlindIndex
    /// The token every Secret Service item carries, so that a search with no attributes (all
    /// of a scope's items, or one item by its path) is an index lookup too. It depends on
    /// the index key alone: computed once, not per Secret Service call.
    let secretServiceMarker: Int64
    let statements = StatementCache()
    let groupCommit = GroupCommit()
    private let writes = BlockingMutex<UInt64>(0)
    let checkpointingWrites: Bool
    /// Fired after a commit that queued a change for sync.
    public let syncChanges = SyncChangeSignal()

    /// The database file's name inside `KEYCHAIN_HOME`.
    public static let databaseFileName = "keychain.db"

    /// The lock file that serializes schema migrations between processes.
    static let lockFileName = "keychain.lock"

    /// Opens (creating if needed) the store in `directory` with keys from `keybag`. The
    /// process will hold metadata keys and, briefly, item keys and secrets: securityd
    /// hardens itself (``ProcessHardening``) in its `main` before it opens a store.
    ///
    /// - Throws: `errSecIO` when the directory or database cannot be opened, or a
    ///   keybag error.
    public convenience init(directory: String, keybag: any Keybag) throws {
        try self.init(path: directory + "/" + Self.databaseFileName, lockPath: directory + "/" + Self.lockFileName, keybag: keybag)
    }

    /// Opens (creating if needed) the store in the database file `path`, migrating it under
    /// an exclusive lock of `lockPath`.
    ///
    /// - Parameter checkpointingWrites: whether every write is copied into the database file
    ///   at once (a file keychain: its one file is whole whenever it is copied).
    init(path: String, lockPath: String, keybag: any Keybag, checkpointingWrites: Bool = false) throws {
        try Self.createPrivateFile(path)
        var configuration = Configuration()
        configuration.label = "keychain"
        // Other processes may hold the write lock (until securityd owns the database,
        // every `security` run opens it): wait for them rather than fail.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Deleted rows are overwritten on disk, not only unlinked from the b-tree.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // An acknowledged write survives power loss, not only a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        database = try Self.retryingWhenBusy {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // Processes opening a new keychain at once would each create the tables;
            // a file lock makes one migrate while the others wait and then find it done.
            try Self.withFileLock(lockPath) {
                try StoreSchema.migrate(pool)
            }
            try pool.read(StoreSchema.verify)
            return pool
        }
        readers = ReaderConnections(path: path, busyMode: configuration.busyMode, limit: configuration.maximumReaderCount)
        self.keybag = keybag
        self.checkpointingWrites = checkpointingWrites
        self.blindIndex = BlindIndex(key: try keybag.indexKey())
        self.secretServiceMarker = blindIndex.token(.genericPassword, attribute: "secret-service", value: .string(""))
    }

    /// Creates `home` (0700) if it does not exist, and any missing directory above it
    /// (0700, as the XDG base directory specification asks): the directory a keychain
    /// keeps everything in. `~/.local/share` does not exist on every fresh system.
    public static func prepareHome(_ home: String) throws {
        var path = home.hasPrefix("/") ? "" : "."
        for component in home.split(separator: "/", omittingEmptySubsequences: true) {
            path += "/" + component
            try createPrivateDirectory(path)
        }
    }

    // MARK: - SecItem entry points

    /// `SecItemAdd`: validates `query` and adds one item.
    ///
    /// - Returns: what the query's `kSecReturn*` keys ask for, or nil.
    public func add(_ query: [String: KeychainValue], caller: AccessGroups) throws -> KeychainValue? {
        try add(ItemQuery(query, for: .add), caller: caller)
    }

    /// `SecItemCopyMatching`: the matches of `query`, shaped by its return keys and limit.
    public func copyMatching(_ query: [String: KeychainValue], caller: AccessGroups) throws -> KeychainValue? {
        try copyMatching(ItemQuery(query, for: .copyMatching), caller: caller)
    }

    /// `SecItemUpdate`: changes `attributes` on every match of `query`.
    public func update(_ query: [String: KeychainValue], attributes: [String: KeychainValue], caller: AccessGroups) throws {
        let parsed = try ItemQuery(query, for: .update)
        try update(parsed, changes: ItemChanges(attributes, for: parsed.itemClass), caller: caller)
    }

    /// `SecItemDelete`: removes every match of `query`.
    public func delete(_ query: [String: KeychainValue], caller: AccessGroups) throws {
        try delete(ItemQuery(query, for: .delete), caller: caller)
    }

    /// Write transactions committed since the store was opened: what a client showing items
    /// compares to know they changed, without reading them (reading decrypts, which keeps the
    /// keychain from locking itself after its timeout).
    public var changeCount: UInt64 { writes.withLock { $0 } }

    // MARK: - Helpers shared by the operations

    /// Runs a database write in a transaction (shared with concurrent writes: group
    /// commit), mapping SQLite errors to OSStatus errors. It is durable when this returns.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        defer { releaseStatementsWhenTooMany() }
        do {
            let result = try groupCommit.write(database, body)
            writes.withLock { $0 &+= 1 }
            if checkpointingWrites { try database.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) } }
            return result
        } catch {
            throw Self.keychainError(error)
        }
    }

    /// Runs a database read, mapping SQLite errors to OSStatus errors.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        defer { releaseStatementsWhenTooMany() }
        return try Self.retryingWhenBusy { try database.read(body) }
    }

    /// Runs a read of one SELECT statement without an explicit transaction: the statement
    /// is its own transaction in SQLite, and GRDB's BEGIN and COMMIT around it cost about
    /// 15 µs of a 172 µs lookup (the benchmark, before metadata keys were cached). It runs
    /// on one of the store's own readers (``ReaderConnections``), waiting for one when all
    /// are taken; after ``close()`` it reaches the closed pool and fails.
    func readStatement<T>(_ body: (Database) throws -> T) throws -> T {
        defer { releaseStatementsWhenTooMany() }
        return try Self.retryingWhenBusy {
            guard let reader = try readers.take() else { return try database.unsafeRead(body) }
            defer { readers.giveBack(reader) }
            return try reader.queue.unsafeRead(body)
        }
    }

    private func releaseStatementsWhenTooMany() {
        if statements.takeOverflow() {
            database.releaseMemoryEventually()
            readers.releaseMemory()
        }
    }

    /// Runs `body`, again after a short wait when SQLite reports SQLITE_BUSY without waiting
    /// in its busy handler — which WAL databases shared between processes do in a few
    /// documented cases (a connection cleaning up the WAL as it closes, recovery after a
    /// crash; <https://www.sqlite.org/wal.html#sometimes_queries_return_sqlite_busy_in_wal_mode>).
    /// A busy transaction was rolled back, so running it again is safe. Errors are mapped
    /// to OSStatus errors.
    ///
    /// - Parameter systemError: the errno behind a failure (see ``keychainError(_:systemError:)``).
    static func retryingWhenBusy<T>(systemError: () -> Int32 = { 0 }, _ body: () throws -> T) throws -> T {
        var delay: UInt32 = 1_000  // microseconds, doubling to 100 ms: about 4 s in all
        for _ in 0..<48 {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                usleep(delay)
                delay = min(delay * 2, 100_000)
            } catch {
                throw keychainError(error, systemError: systemError())
            }
        }
        do {
            return try body()
        } catch {
            throw keychainError(error, systemError: systemError())
        }
    }

    /// An OSStatus error for any error out of the database layer. The message holds
    /// SQLite's result code and message, never statement arguments.
    ///
    /// - Parameter systemError: the errno behind an I/O error (`sqlite3_system_errno`), when
    ///   known: a write refused for want of space or over the file-size limit is
    ///   errSecDiskFull, as SQLITE_FULL is.
    static func keychainError(_ error: any Error, systemError: Int32 = 0) -> KeychainError {
        if let error = error as? KeychainError { return error }
        guard let error = error as? DatabaseError else {
            return KeychainError(status: OSStatusCode.io, message: "storage error")
        }
        var detail = "SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "")"
        if systemError != 0 { detail += " (\(SystemCall.describe(systemError)))" }
        switch error.resultCode {
        case .SQLITE_FULL: return KeychainError(status: OSStatusCode.diskFull, message: detail)
        case .SQLITE_IOERR where [ENOSPC, EFBIG, EDQUOT].contains(systemError):
            return KeychainError(status: OSStatusCode.diskFull, message: detail)
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH:
            return KeychainError(status: OSStatusCode.wrPerm, message: detail)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return KeychainError(status: OSStatusCode.decode, message: detail)
        case .SQLITE_CONSTRAINT: return KeychainError(status: OSStatusCode.duplicateItem, message: detail)
        default: return KeychainError(status: OSStatusCode.io, message: detail)
        }
    }

    /// Runs `body` holding an exclusive `flock` on `path` (created 0600).
    static func withFileLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw SystemCall.ioError("cannot open \(path)")
        }
        defer { Glibc.close(fd) }  // closing releases the lock
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw SystemCall.ioError("cannot lock \(path)")
            }
        }
        return try body()
    }

    static func createPrivateDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw SystemCall.ioError("cannot create \(path)")
        }
    }

    /// Creates the database file with mode 0600 before SQLite opens it, so that it and
    /// its -wal and -shm files (SQLite copies the mode) are private from the start.
    static func createPrivateFile(_ path: String) throws {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw SystemCall.ioError("cannot open \(path)")
        }
        Glibc.close(fd)
    }
}
