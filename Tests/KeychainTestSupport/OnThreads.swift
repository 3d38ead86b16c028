// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation

/// Runs `body(i)` for `count` threads at once and returns their results in order.
///
/// Threads of their own, not tasks: Swift concurrency's pool has a thread per core, so
/// blocking calls made from tasks run two at a time here, not at once.
public func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let results = ResultBox<T>(count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            results.set(index, Result { try body(index) })
            group.leave()
        }.start()
    }
    group.wait()
    return try results.values()
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of Swift
/// concurrency's pool: for a long test made of blocking calls (processes, sockets), which on
/// the pool would starve every other suite's tasks of one of its few threads.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var results: [Result<T, any Error>?]
    init(_ count: Int) { results = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ result: Result<T, any Error>) { lock.withLock { results[index] = result } }
    func values() throws -> [T] { try lock.withLock { try results.map { try $0!.get() } } }
}
#endif
