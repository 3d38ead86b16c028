import GRDB
import KeychainModel

/// Read-only SQLite connections the store keeps for its single-statement reads, taken and
/// given back under one mutex.
///
/// GRDB's `DatabasePool` hands out its readers through a dispatch barrier, a semaphore, a
/// dispatch group and a lock, and asks SQLite for the schema version before every read
/// (`PRAGMA schema_version`, to refresh GRDB's schema cache): about 43,000 instructions of
/// a 237,000-instruction find in securityd (docs/PERFORMANCE.md). These readers skip both.
/// They hold no GRDB schema cache that a read could depend on — the store's reads are raw
/// SQL, which SQLite itself prepares again if another process changed the schema — and
/// they see every committed write as the pool's readers do (WAL, one read transaction
/// per statement).
///
/// At most `limit` are opened; a read that finds all of them busy goes through the pool,
/// so reads never wait here. After ``releaseMemory()`` each reader drops its prepared
/// statements the next time it is taken.
final class ReaderConnections: Sendable {
    private struct Idle {
        let queue: DatabaseQueue
        /// The ``State/generation`` the reader last released its memory at.
        let generation: Int
    }

    private struct State {
        var idle: [Idle] = []
        var opened = 0
        var generation = 0
        var closed = false
    }

    /// A reader taken by ``take()``, to give back with ``giveBack(_:)``.
    struct Reader {
        let queue: DatabaseQueue
        fileprivate let generation: Int
    }

    private let path: String
    private let configuration: Configuration
    private let limit: Int
    private let state = BlockingMutex(State())

    init(path: String, busyMode: Database.BusyMode, limit: Int) {
        self.path = path
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "keychain reader"
        configuration.busyMode = busyMode
        self.configuration = configuration
        self.limit = limit
    }

    private enum Taken {
        /// An idle reader, and whether memory was released since it last dropped its own.
        case idle(Reader, stale: Bool)
        case open(generation: Int)
        case none
    }

    /// An idle reader, a new one while fewer than `limit` are open, or nil when all are
    /// busy or the store was closed (then the caller reads through the pool).
    func take() throws -> Reader? {
        let taken = state.withLock { state -> Taken in
            if state.closed { return .none }
            if let idle = state.idle.popLast() {
                return .idle(Reader(queue: idle.queue, generation: state.generation), stale: idle.generation != state.generation)
            }
            guard state.opened < limit else { return .none }
            state.opened += 1
            return .open(generation: state.generation)
        }
        switch taken {
        case .none:
            return nil
        case .idle(let reader, let stale):
            if stale { reader.queue.releaseMemory() }
            return reader
        case .open(let generation):
            do {
                return Reader(queue: try DatabaseQueue(path: path, configuration: configuration), generation: generation)
            } catch {
                state.withLock { $0.opened -= 1 }
                throw error
            }
        }
    }

    /// Gives `reader` back after its read; closes it if the store was closed meanwhile.
    func giveBack(_ reader: Reader) {
        let keep = state.withLock { state -> Bool in
            if state.closed {
                state.opened -= 1
                return false
            }
            state.idle.append(Idle(queue: reader.queue, generation: reader.generation))
            return true
        }
        if !keep { try? reader.queue.close() }
    }

    /// Makes every reader drop its prepared statements and SQLite's caches before its next read.
    func releaseMemory() {
        state.withLock { $0.generation &+= 1 }
    }

    /// Closes the idle readers, and each busy one when it is given back; reads go through
    /// the pool from now on (which the store closes after this).
    func close() {
        let idle = state.withLock { state -> [Idle] in
            state.closed = true
            defer { state.opened -= state.idle.count; state.idle = [] }
            return state.idle
        }
        for reader in idle { try? reader.queue.close() }
    }
}
