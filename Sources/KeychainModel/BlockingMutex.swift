#if canImport(Glibc)
import Glibc
#endif

/// A lock for sections that block — a round trip to another process — whose waiters sleep
/// in the kernel at once.
///
/// `Synchronization.Mutex` spins before it sleeps, which is right for short sections;
/// around a socket round trip, threads waiting their turn spin away the CPU that the
/// holder and the process it waits for need (the benchmark measured 12% of securityd's
/// time spinning with 8 clients on 2 cores).
public final class BlockingMutex<State: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `mutex` is held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
