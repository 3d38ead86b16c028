import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import KeychainModel
@testable import KeychainStore
import KeychainTestSupport
import Testing

/// The store's own readers (outside GRDB's pool): reused, bounded, closed with the store,
/// and never serving a read from before a committed write.
@Suite struct ReaderConnectionsTests {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    private var databasePath: String { keychain.home + "/" + KeychainStore.databaseFileName }

    @Test func readersAreReusedBoundedAndClosed() throws {
        let readers = ReaderConnections(path: databasePath, busyMode: .immediateError, limit: 2)
        let first = try #require(try readers.take())
        let second = try #require(try readers.take())
        #expect(first.queue !== second.queue)
        // Both taken: a third read waits until one is given back, and gets that one.
        let third = BlockingMutex<DatabaseQueue?>(nil)
        let started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            started.signal()
            if let reader = try? readers.take() {
                third.withLock { $0 = reader.queue }
                readers.giveBack(reader)
            }
            done.signal()
        }
        started.wait()
        #expect(done.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
        readers.giveBack(first)
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(third.withLock { $0 } === first.queue)
        #expect(readers.openCount == 2)
        let again = try #require(try readers.take())
        #expect(again.queue === first.queue)
        // A reader reads the keychain, and cannot write to it.
        #expect(try again.queue.unsafeRead { try Int.fetchOne($0, sql: "SELECT count(*) FROM genp") } == 0)
        #expect(throws: DatabaseError.self) { try again.queue.inDatabase { try $0.execute(sql: "DELETE FROM genp") } }
        readers.giveBack(again)

        // Closing waits for the reader still taken; the idle one is closed at once.
        let closed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            readers.close()
            closed.signal()
        }
        #expect(closed.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
        #expect(throws: DatabaseError.self) { try first.queue.unsafeRead { try Int.fetchOne($0, sql: "SELECT 1") } }
        readers.giveBack(second)
        #expect(closed.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(throws: DatabaseError.self) { try second.queue.unsafeRead { try Int.fetchOne($0, sql: "SELECT 1") } }
        #expect(try readers.take() == nil)
        #expect(readers.openCount == 0)
    }

    @Test func afterAReleaseAReaderDropsItsStatementsAndStillServes() throws {
        let readers = ReaderConnections(path: databasePath, busyMode: .immediateError, limit: 1)
        let sql = "SELECT count(*) FROM genp"
        func preparedStatements(_ reader: ReaderConnections.Reader) -> Int {
            reader.queue.inDatabase { db in
                var count = 0
                var statement = sqlite3_next_stmt(db.sqliteConnection, nil)
                while let current = statement {
                    count += 1
                    statement = sqlite3_next_stmt(db.sqliteConnection, current)
                }
                return count
            }
        }
        let reader = try #require(try readers.take())
        #expect(try reader.queue.unsafeRead { try Int.fetchOne($0.cachedStatement(sql: sql)) } == 0)
        #expect(preparedStatements(reader) >= 1)
        readers.giveBack(reader)
        readers.releaseMemory()
        let released = try #require(try readers.take())
        #expect(released.queue === reader.queue)
        #expect(preparedStatements(released) == 0)
        #expect(try released.queue.unsafeRead { try Int.fetchOne($0.cachedStatement(sql: sql)) } == 0)
        readers.giveBack(released)
    }

    /// Each thread updates its own item and reads it back at once, more threads than the
    /// store has readers: a read that ran on a reader holding an older snapshot would see
    /// the value before the write.
    @Test func aReadAfterACommittedWriteSeesItOnEveryReader() throws {
        let store = keychain.store, caller = keychain.caller
        let threads = 12, rounds = 20
        for thread in 0..<threads {
            _ = try store.add(genericPassword(account: "t\(thread)", service: "readers", ["v_Data": .data(.init(utf8: "0"))]), caller: caller)
        }
        let failures = BlockingMutex<[String]>([])
        let group = DispatchGroup()
        // Threads of their own (not concurrentPerform's one per CPU): more at once than readers.
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for round in 1...rounds {
                    let value = "\(round)"
                    do {
                        try store.update(
                            genericPassword(account: "t\(thread)", service: "readers"), attributes: ["v_Data": .data(.init(utf8: value))],
                            caller: caller)
                        let read = try store.copyMatching(
                            genericPassword(account: "t\(thread)", service: "readers", ["r_Data": .bool(true)]), caller: caller)
                        if read != .data(.init(utf8: value)) { failures.withLock { $0.append("t\(thread) round \(round): \(String(describing: read))") } }
                    } catch {
                        failures.withLock { $0.append("t\(thread) round \(round): \(error)") }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(store.readers.openCount > 1)
    }

    /// A find that stops at its limit before the last candidate leaves no statement active
    /// on its reader: an unfinished statement would hold a read snapshot, and with it the
    /// WAL, which a truncating checkpoint could then not reset.
    @Test func aFindStoppedAtItsLimitLeavesNoReadOpen() throws {
        let store = keychain.store, caller = keychain.caller
        for account in ["a", "b", "c"] {
            _ = try store.add(genericPassword(account: account, service: "limit"), caller: caller)
        }
        // m_LimitOne (the default): the first of three candidates, then stop.
        #expect(try store.copyMatching(genericPassword(service: "limit", ["r_Attributes": .bool(true)]), caller: caller) != nil)
        let raw = try DatabaseQueue(path: databasePath)
        let checkpoint = try raw.writeWithoutTransaction { db in
            try #require(try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)"))
        }
        #expect(checkpoint[0] as Int == 0, "no reader holds the WAL (busy: \(checkpoint))")
    }

    @Test func aClosedStoreRefusesReads() throws {
        let store = keychain.store, caller = keychain.caller
        _ = try store.add(genericPassword(account: "a", service: "closing"), caller: caller)
        #expect(try store.copyMatching(genericPassword(account: "a", service: "closing", ["r_Attributes": .bool(true)]), caller: caller) != nil)
        try store.close()
        #expect(throws: KeychainError.io) { try store.copyMatching(genericPassword(account: "a", service: "closing"), caller: caller) }
    }
}
