import Dispatch
import GRDB
import KeychainModel

/// Read-only SQLite connections the store keeps for its single-statement reads, taken and
/// given back under one mutex.
///
/// GRDB's `DatabasePool` hands out its readers through a dispatch barrier, a semaphore, a
/// dispatch group and a lock, and asks SQLite for the schema version before every read
/// (`PRAGMA schema_version`, to refresh GRDB's schema cache): about 43,000 instructions of
/// a 237,000-instruction find in securityd (CHANGELOG.md, "Performance history"). These readers skip the
/// barrier, the group and the pragma: what is left is a mutex, a semaphore and the
/// connection's own dispatch queue.
/// They hold no GRDB schema cache that a read could depend on — the store's reads are raw
/// SQL, which SQLite itself prepares again if another process changed the schema — and
/// they see every committed write as the pool's readers do (WAL, one read transaction
/// per statement).
///
/// At most `limit` are opened; a read that finds all of them busy waits for one, as it
/// waited for one of the pool's (reading through the pool instead would open up to as many
/// again: 2.5 MiB more in securityd at 32 clients). After ``releaseMemory()`` each reader
/// drops its prepared statements the next time it is taken. A read must not take a second
/// reader of the same store while it holds one (GRDB's pool refused such nesting at once;
/// here five of them would wait for each other), and no caller does.
final class ReaderConnections: Sendable {
    private struct Idle {
        let queue: DatabaseQueue
        /// The ``State/generation`` the reader last released its memory at.
        let generation: Int
    }

    private struct State {
        var idle: [Idle] = []
        var generation = 0
        var closed = false
        /// Readers taken and not yet given back.
        var taken = 0
    }

    /// A reader taken by ``take()``, to give back with ``giveBack(_:)``.
    struct Reader {
        let queue: DatabaseQueue
        fileprivate let generation: Int
    }

    private let path: String
    private let configuration: Configuration
    private let state = BlockingMutex(State())
    private let limit: Int
    /// Counts the readers not taken, opened or not.
    private let available: DispatchSemaphore

    init(path: String, busyMode: Database.BusyMode, limit: Int) {
        self.path = path
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "keychain reader"
        configuration.busyMode = busyMode
        self.configuration = configuration
        self.limit = limit
        self.available = DispatchSemaphore(value: limit)
    }

    deinit {
        // libdispatch traps when a semaphore goes away below its initial value: a reader
        // never given back (only a failing test can) must not take the process with it.
        for _ in 0..<state.withLock({ $0.taken }) { available.signal() }
    }

    private enum Taken {
        /// An idle reader, and whether memory was released since it last dropped its own.
        case idle(Reader, stale: Bool)
        case open(generation: Int)
        case none
    }

    /// An idle reader, or a new one while fewer than `limit` are open, once one is not taken;
    /// nil when the store was closed (then the caller reads through the pool, which refuses).
    /// Every reader taken must be given back.
    func take() throws -> Reader? {
        available.wait()
        let taken = state.withLock { state -> Taken in
            if state.closed { return .none }
            state.taken += 1
            if let idle = state.idle.popLast() {
                return .idle(Reader(queue: idle.queue, generation: state.generation), stale: idle.generation != state.generation)
            }
            // Fewer than `limit` are taken (the semaphore let this one through) and none is idle.
            return .open(generation: state.generation)
        }
        switch taken {
        case .none:
            available.signal()
            return nil
        case .idle(let reader, let stale):
            if stale { reader.queue.releaseMemory() }
            return reader
        case .open(let generation):
            let queue: DatabaseQueue
            do {
                queue = try DatabaseQueue(path: path, configuration: configuration)
            } catch {
                state.withLock { $0.taken -= 1 }
                available.signal()
                throw error
            }
            // Opened outside the lock: the store may have been closed meanwhile.
            let closed = state.withLock { state in
                if state.closed { state.taken -= 1 }
                return state.closed
            }
            guard !closed else {
                try? queue.close()
                available.signal()
                return nil
            }
            return Reader(queue: queue, generation: generation)
        }
    }

    /// Gives `reader` back after its read; closes it if the store was closed meanwhile.
    func giveBack(_ reader: Reader) {
        let keep = state.withLock { state -> Bool in
            state.taken -= 1
            if state.closed { return false }
            state.idle.append(Idle(queue: reader.queue, generation: reader.generation))
            return true
        }
        if !keep { try? reader.queue.close() }
        available.signal()
    }

    /// Makes every reader drop its prepared statements and SQLite's caches before its next read.
    func releaseMemory() {
        state.withLock { $0.generation &+= 1 }
    }

    /// Closes the idle readers and waits until every taken one is given back (and closed);
    /// reads go to the pool from now on, which the store closes after this, so they fail.
    /// Not to be called while holding a reader.
    func close() {
        let idle = state.withLock { state -> [Idle] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for reader in idle { try? reader.queue.close() }
        // Every slot free means every reader came back: reads that were running have ended.
        for _ in 0..<limit { available.wait() }
        for _ in 0..<limit { available.signal() }
    }

    /// How many readers are open: idle, and taken (for tests).
    var openCount: Int { state.withLock { $0.idle.count + $0.taken } }
}
