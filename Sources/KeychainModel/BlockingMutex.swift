#if canImport(Glibc)
import Glibc
#endif

/// A mutex whose waiters sleep in the kernel at once (a pthread mutex), used instead of
/// `Synchronization.Mutex` throughout.
///
/// Two reasons. `Synchronization.Mutex` spins before it sleeps: around a socket round trip,
/// threads waiting their turn spin away the CPU that the holder and the process it waits
/// for need (the benchmark measured 12% of securityd's time spinning with 8 clients on
/// 2 cores). And on Linux it is a futex that ThreadSanitizer cannot see, so every access
/// it guards is reported as a race; a pthread mutex is one it understands, which is what
/// lets the test suite run under `--sanitize=thread` (docs/RELIABILITY.md).
public final class BlockingMutex<State: ~Copyable & Sendable>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `mutex` is held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: consuming State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock.
    public func withLock<Result: ~Copyable>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
