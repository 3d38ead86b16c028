import Dispatch
import Foundation
import KeychainClient
import KeychainModel

/// Runs one operation from several clients at once, each on a thread of its own with a
/// connection of its own, all released together; every operation is timed.
struct ConcurrentLoad {
    /// One client's share of the load.
    struct Share: Sendable {
        let client: KeychainClient
        /// Which client this is, 0..<clients.
        let index: Int
        /// How many operations this client runs.
        let operations: Int
        /// How many operations the clients before this one run: `offset + n` numbers this
        /// client's n-th operation uniquely among all of them.
        let offset: Int
    }

    let clients: [KeychainClient]

    /// Runs `operations` calls of `body` in all, split evenly between the clients;
    /// `body(share, n)` runs the client's n-th operation.
    func run(operations: Int, _ body: @escaping @Sendable (Share, Int) throws -> Void) throws -> Latencies {
        let count = clients.count
        var shares: [Share] = []
        for index in 0..<count {
            let share = operations / count + (index < operations % count ? 1 : 0)
            shares.append(Share(client: clients[index], index: index, operations: share, offset: shares.last.map { $0.offset + $0.operations } ?? 0))
        }
        let samples = BlockingMutex<[[UInt64]]>(Array(repeating: [], count: count))
        let failure = BlockingMutex<(any Error)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for share in shares {
            done.enter()
            let thread = Thread {
                ready.signal()
                go.wait()
                var mine = [UInt64](repeating: 0, count: share.operations)
                do {
                    for n in 0..<share.operations {
                        let before = monotonicNanoseconds()
                        try body(share, n)
                        mine[n] = monotonicNanoseconds() - before
                    }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                }
                samples.withLock { $0[share.index] = mine }
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in shares { ready.wait() }
        let start = monotonicNanoseconds()
        for _ in shares { go.signal() }
        done.wait()
        let elapsed = monotonicNanoseconds() - start
        if let error = failure.withLock({ $0 }) { throw error }
        return Latencies(samples.withLock { $0.flatMap { $0 } }, elapsedNanoseconds: elapsed)
    }
}
