#if canImport(Glibc)
import Glibc
#endif

/// Monotonic nanoseconds: one vDSO call, cheap enough to wrap every operation.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The latencies of one measurement, in nanoseconds, and what they add up to.
struct Latencies: Sendable {
    /// Sorted ascending.
    let sorted: [UInt64]
    /// Wall-clock time from the first operation's start to the last one's end.
    let elapsedNanoseconds: UInt64

    init(_ samples: [UInt64], elapsedNanoseconds: UInt64? = nil) {
        sorted = samples.sorted()
        self.elapsedNanoseconds = elapsedNanoseconds ?? samples.reduce(0, +)
    }

    var count: Int { sorted.count }

    /// The nearest-rank percentile, in microseconds.
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(max(rank, 1), sorted.count) - 1]) / 1_000
    }

    var p50: Double { percentile(50) }
    var p99: Double { percentile(99) }

    /// Operations per second over the elapsed wall-clock time.
    var throughput: Double {
        elapsedNanoseconds == 0 ? 0 : Double(sorted.count) * 1e9 / Double(elapsedNanoseconds)
    }

    /// Times `body` `count` times, one sample each.
    static func measure(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Latencies {
        var samples = [UInt64](repeating: 0, count: count)
        let start = monotonicNanoseconds()
        for index in 0..<count {
            let before = monotonicNanoseconds()
            try body(index)
            samples[index] = monotonicNanoseconds() - before
        }
        return Latencies(samples, elapsedNanoseconds: monotonicNanoseconds() - start)
    }
}
