import KeychainModel

/// Tells whoever runs sync that a committed change joined the outgoing queue, so it can
/// send soon instead of at its next timed round. Fired after the commit, never inside the
/// transaction; with no observer it does nothing.
public final class SyncChangeSignal: Sendable {
    private let observer = BlockingMutex<(@Sendable () -> Void)?>(nil)

    init() {}

    /// Calls `handler` after each commit that queued a change (from the committing thread:
    /// it must return at once).
    public func observe(_ handler: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = handler }
    }

    func fire() {
        observer.withLock { $0 }?()
    }
}
