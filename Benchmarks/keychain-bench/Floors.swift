import BenchWorkload
import Crypto
import Foundation
import GRDBSQLite

#if canImport(Glibc)
import Glibc
#endif

/// What no keychain daemon on this machine can beat, measured in the same run: the parts
/// a request cannot avoid, each done bare.
enum Floors {
    /// A message of `size` bytes to another process over a Unix stream socket and back.
    static func socketRoundTrip(size: Int, count: Int) throws -> Latencies {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        defer { close(pair[0]) }
        let peer = try ChildProcess.spawn(
            try executablePath(), [EchoPeer.argument, String(size)], environment: ProcessInfo.processInfo.environment, descriptor: pair[1])
        close(pair[1])
        defer { ChildProcess.wait(peer) }
        var message = [UInt8](repeating: 0x5a, count: size)
        var reply = [UInt8](repeating: 0, count: size)
        // Warm up both ends (page faults, scheduler) before timing.
        for _ in 0..<200 { _ = SocketMessage.write(pair[0], message) && SocketMessage.read(pair[0], &reply) }
        let latencies = try Latencies.measure(count) { index in
            message[0] = UInt8(truncatingIfNeeded: index)
            guard SocketMessage.write(pair[0], message), SocketMessage.read(pair[0], &reply) else {
                throw BenchError("the echo peer went away")
            }
        }
        shutdown(pair[0], Int32(SHUT_WR))
        return latencies
    }

    /// A point lookup through an index in a table of `rows` rows shaped like an item table
    /// (integer token, metadata and secret blobs), prepared once, in this process.
    static func sqliteLookup(rows: Int, count: Int, in directory: String) throws -> Latencies {
        let database = try SQLiteFile(directory + "/floor-lookup.db")
        defer { database.remove() }
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("CREATE TABLE item (rowid INTEGER PRIMARY KEY, token INTEGER NOT NULL, meta BLOB NOT NULL, secret BLOB NOT NULL)")
        try database.execute("BEGIN")
        let insert = try database.prepare("INSERT INTO item (token, meta, secret) VALUES (?, ?, ?)")
        let meta = [UInt8](repeating: 0xa5, count: 256), secret = [UInt8](repeating: 0x5a, count: 96)
        for index in 0..<rows {
            sqlite3_bind_int64(insert, 1, token(index))
            sqlite3_bind_blob(insert, 2, meta, Int32(meta.count), nil)
            sqlite3_bind_blob(insert, 3, secret, Int32(secret.count), nil)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw database.error("insert") }
            sqlite3_reset(insert)
        }
        sqlite3_finalize(insert)
        try database.execute("CREATE INDEX item_token ON item(token)")
        try database.execute("COMMIT")
        let select = try database.prepare("SELECT meta, secret FROM item WHERE token = ?")
        defer { sqlite3_finalize(select) }
        var generator = SplitMix64(seed: 7)
        var bytes = 0
        let lookup = { (index: Int) throws in
            sqlite3_bind_int64(select, 1, token(Int.random(in: 0..<rows, using: &generator)))
            guard sqlite3_step(select) == SQLITE_ROW else { throw database.error("lookup") }
            bytes &+= Int(sqlite3_column_bytes(select, 0)) + Int(sqlite3_column_bytes(select, 1))
            sqlite3_reset(select)
        }
        for index in 0..<min(rows, 2_000) { try lookup(index) }
        let latencies = try Latencies.measure(count, lookup)
        guard bytes > 0 else { throw BenchError("lookups read nothing") }
        return latencies
    }

    /// One row inserted and committed durably (WAL, synchronous = FULL: an fsync per commit),
    /// as securityd commits every write.
    static func durableCommit(count: Int, in directory: String) throws -> Latencies {
        let database = try SQLiteFile(directory + "/floor-commit.db")
        defer { database.remove() }
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        try database.execute("CREATE TABLE item (rowid INTEGER PRIMARY KEY, meta BLOB NOT NULL)")
        let insert = try database.prepare("INSERT INTO item (meta) VALUES (?)")
        defer { sqlite3_finalize(insert) }
        let meta = [UInt8](repeating: 0xa5, count: 352)
        return try Latencies.measure(count) { _ in
            try database.execute("BEGIN IMMEDIATE")
            sqlite3_bind_blob(insert, 1, meta, Int32(meta.count), nil)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw database.error("insert") }
            sqlite3_reset(insert)
            try database.execute("COMMIT")
        }
    }

    /// One AES-256-GCM open (decrypt and verify) of a message of `size` bytes.
    static func aesGCMOpen(size: Int, count: Int) throws -> Latencies {
        let key = SymmetricKey(size: .bits256)
        let box = try AES.GCM.seal(Data(repeating: 0x42, count: size), using: key)
        var opened = 0
        for _ in 0..<1_000 { opened &+= try AES.GCM.open(box, using: key).count }
        let latencies = try Latencies.measure(count) { _ in opened &+= try AES.GCM.open(box, using: key).count }
        guard opened > 0 else { throw BenchError("AES-GCM opened nothing") }
        return latencies
    }

    /// Starting and reaping a process that does nothing (`/bin/true`).
    static func processSpawn(count: Int) throws -> Latencies {
        let environment = ProcessInfo.processInfo.environment
        return try Latencies.measure(count) { _ in
            guard try ChildProcess.run("/bin/true", [], environment: environment) == 0 else { throw BenchError("/bin/true failed") }
        }
    }

    /// A token that spreads rows over the index as keyed tokens do.
    private static func token(_ index: Int) -> Int64 {
        var generator = SplitMix64(seed: UInt64(index))
        return Int64(bitPattern: generator.next())
    }

    static func executablePath() throws -> String {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw BenchError("cannot read /proc/self/exe")
        }
        return path
    }
}

/// A raw SQLite connection: the floor is SQLite itself, without any Swift layer.
final class SQLiteFile {
    let path: String
    private let handle: OpaquePointer

    init(_ path: String) throws {
        self.path = path
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
            throw BenchError("cannot open \(path)")
        }
        self.handle = handle
    }

    deinit { sqlite3_close(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw error(sql) }
        return statement
    }

    func error(_ context: String) -> BenchError {
        BenchError("SQLite (\(context)): \(String(cString: sqlite3_errmsg(handle)))")
    }

    func remove() {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }
}
