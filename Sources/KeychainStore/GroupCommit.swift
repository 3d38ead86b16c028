import Dispatch
import GRDB
import GRDBSQLite
import KeychainModel

/// Group commit: writes that queue up while another transaction commits are committed
/// together, in one transaction and one fsync, each in a savepoint of its own.
///
/// A durable commit costs an fsync (over 100 µs here) however little it writes, and the
/// database has one writer; with many clients, paying it once per batch rather than once
/// per write is what lets adds scale. A write that fails rolls back its savepoint only;
/// a commit that fails fails every write of its batch, none of which was stored. Every
/// caller returns only after its own write is durable (or has failed).
final class GroupCommit: Sendable {
    /// One write waiting for a transaction.
    private final class Pending: @unchecked Sendable {
        // @unchecked: run and its outcome are touched by the thread holding the database
        // writer only; the owner reads the outcome after `done` is signalled.
        let run: (Database) throws -> Void
        var failure: (any Error)?
        let done = DispatchSemaphore(value: 0)

        init(_ run: @escaping (Database) throws -> Void) { self.run = run }
    }

    private final class Outcome<T>: @unchecked Sendable {
        var value: T?  // written before `done` is signalled, read after
    }

    private let queue = BlockingMutex<[Pending]>([])

    /// Runs `body` in a transaction shared with the writes queued at the same time.
    ///
    /// - Throws: what `body` threw, or the commit's error.
    func write<T>(_ pool: DatabasePool, _ body: (Database) throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let outcome = Outcome<T>()
            let pending = Pending { db in outcome.value = try body(db) }
            queue.withLock { $0.append(pending) }
            // The writer is serial: whoever holds it commits everything queued so far, so
            // by the time this thread holds it, an earlier one may have committed ours.
            pool.writeWithoutTransaction { db in
                let batch = queue.withLock { queue in
                    defer { queue.removeAll() }
                    return queue
                }
                if !batch.isEmpty { commit(batch, in: db, path: pool.path) }
            }
            pending.done.wait()
            if let failure = pending.failure { throw failure }
            return outcome.value!  // no failure: run returned a value
        }
    }

    /// The errno behind the connection's last I/O error, or what ``StorageFault`` finds.
    private static func systemError(_ db: Database, path: String) -> Int32 {
        let recorded = sqlite3_system_errno(db.sqliteConnection)
        return recorded != 0 ? recorded : StorageFault.errno(files: [path, path + "-wal"])
    }

    private func commit(_ batch: [Pending], in db: Database, path: String) {
        do {
            // Another process may hold the write lock (BEGIN IMMEDIATE finds it busy): wait.
            try KeychainStore.retryingWhenBusy(systemError: { Self.systemError(db, path: path) }) {
                try db.inTransaction(.immediate) {
                    for pending in batch {
                        pending.failure = nil
                        do {
                            try db.inSavepoint {
                                try pending.run(db)
                                return .commit
                            }
                        } catch {
                            pending.failure = error
                        }
                    }
                    return .commit
                }
            }
        } catch {
            for pending in batch { pending.failure = error }
        }
        for pending in batch { pending.done.signal() }
    }
}
