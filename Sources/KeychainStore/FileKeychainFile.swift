public import EnclaveProtocol
import FoundationEssentials
import GRDB
public import KeychainCrypto
public import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// A file keychain on disk: one SQLite file holding its header (``FileKeychainHeader``),
/// its settings and the same item tables as the login keychain, encrypted row by row
/// under the keychain's own key. The file is whole at every moment (writes are
/// checkpointed into it), so copying it copies the keychain.
public enum FileKeychainFile {
    static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// The header table, beside the item tables of ``StoreSchema``. Its SQL never changes:
    /// every file keychain ever written has exactly this text in its schema.
    static let headerTable = "trousseau_keychain"
    static let headerTableSQL = """
        CREATE TABLE trousseau_keychain (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            header BLOB NOT NULL,
            auto_lock_seconds INTEGER NOT NULL,
            lock_on_sleep INTEGER NOT NULL,
            partition_list TEXT NOT NULL DEFAULT ''
        )
        """

    /// Creates the keychain file at `path` with its header, settings and empty item tables,
    /// all at once: it is written beside `path` and linked into place, so a reader never sees
    /// half a keychain and of two processes creating the same one, one wins.
    ///
    /// - Throws: `errSecDuplicateKeychain` when `path` exists; `errSecNoSuchKeychain` when
    ///   its directory does not; `errSecIO` otherwise.
    public static func create(at path: String, header: FileKeychainHeader, settings: KeychainSettings, keybag: any Keybag) throws {
        if access(path, F_OK) == 0 { throw duplicate(path) }
        let temporary = path + ".creating-" + UUID().uuidString
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == ENOENT { throw KeychainError(status: OSStatusCode.noSuchKeychain, message: "no directory for \(path)") }
            throw SystemCall.ioError("cannot create \(path)")
        }
        Glibc.close(fd)
        defer { removeFiles(temporary) }
        do {
            let store = try KeychainStore(path: temporary, lockPath: temporary, keybag: keybag, checkpointingWrites: true)
            try store.write { db in
                try db.execute(sql: headerTableSQL)
                try db.execute(
                    sql: "INSERT INTO trousseau_keychain (id, header, auto_lock_seconds, lock_on_sleep) VALUES (1, ?, ?, ?)",
                    arguments: [header.encoded, Int64(settings.autoLockSeconds), settings.lockOnSleep])
            }
            try store.close()
        }
        if link(temporary, path) != 0 {
            if errno == EEXIST { throw duplicate(path) }
            throw SystemCall.ioError("cannot create \(path)")
        }
    }

    /// The header and settings of the keychain at `path`. The file is only read.
    ///
    /// - Throws: `errSecNoSuchKeychain` when there is no file; `errSecInvalidKeychain`
    ///   when it is not a keychain of ours, is damaged or truncated, or of a newer format.
    public static func read(at path: String) throws -> (header: FileKeychainHeader, settings: KeychainSettings) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR {
                throw KeychainError(status: OSStatusCode.noSuchKeychain, message: "no keychain at \(path)")
            }
            throw SystemCall.ioError("cannot open \(path)")
        }
        var magic = [UInt8](repeating: 0, count: sqliteMagic.count)
        let count = Glibc.read(fd, &magic, magic.count)
        Glibc.close(fd)
        guard count == magic.count, magic == sqliteMagic else { throw invalid(path, "it is not a keychain file") }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            let row = try queue.read { db in
                try Row.fetchOne(db, sql: "SELECT header, auto_lock_seconds, lock_on_sleep FROM trousseau_keychain WHERE id = 1")
            }
            guard let row, let bytes = row["header"] as Data? else { throw invalid(path, "it has no keychain header") }
            let header = try FileKeychainHeader(decoding: bytes)
            let seconds = row["auto_lock_seconds"] as Int64? ?? 0
            let settings = KeychainSettings(autoLockSeconds: UInt32(clamping: seconds), lockOnSleep: row["lock_on_sleep"] as Bool? ?? false)
            return (header, settings)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw invalid(path, "it is damaged or not a keychain file")
        }
    }

    /// Replaces the header (a password change) or the settings of the keychain `store` holds.
    public static func update(_ store: KeychainStore, header: FileKeychainHeader? = nil, settings: KeychainSettings? = nil) throws {
        try store.write { db in
            if let header {
                try db.execute(sql: "UPDATE trousseau_keychain SET header = ? WHERE id = 1", arguments: [header.encoded])
            }
            if let settings {
                try db.execute(
                    sql: "UPDATE trousseau_keychain SET auto_lock_seconds = ?, lock_on_sleep = ? WHERE id = 1",
                    arguments: [Int64(settings.autoLockSeconds), settings.lockOnSleep])
            }
        }
    }

    /// Opens the item store of the keychain at `path` with its keys; the keychain must be unlocked.
    public static func openStore(at path: String, keybag: any Keybag) throws -> KeychainStore {
        try KeychainStore(path: path, lockPath: path, keybag: keybag, checkpointingWrites: true)
    }

    /// Removes the keychain file and SQLite's files beside it.
    public static func delete(at path: String) throws {
        _ = try read(at: path)  // only a keychain is ever removed
        if unlink(path) != 0, errno != ENOENT { throw SystemCall.ioError("cannot delete \(path)") }
        removeFiles(path, keepingMain: true)
    }

    private static func removeFiles(_ path: String, keepingMain: Bool = false) {
        if !keepingMain { unlink(path) }
        unlink(path + "-wal")
        unlink(path + "-shm")
        unlink(path + "-journal")
    }

    private static func duplicate(_ path: String) -> KeychainError {
        KeychainError(status: OSStatusCode.duplicateKeychain, message: "a keychain already exists at \(path)")
    }

    private static func invalid(_ path: String, _ why: String) -> KeychainError {
        KeychainError(status: OSStatusCode.invalidKeychain, message: "\(path): \(why)")
    }
}

extension KeychainStore {
    /// Closes the database (its files are whole afterwards).
    public func close() throws {
        readers.close()
        _ = try database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        try database.close()
    }
}
