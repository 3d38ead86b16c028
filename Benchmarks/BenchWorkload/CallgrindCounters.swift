/// What `callgrind_control -e Ir` prints about running processes, read.
public enum CallgrindCounters {
    /// The instructions in `callgrind_control -e Ir`'s output, per process: "PID n: command",
    /// then "Totals: Ir", then "Th 1  25,372,596" for each thread (from thread 10 on,
    /// "Th10  …"). A process is in the result only when a thread of it was counted.
    public static func parse(_ lines: [Substring]) -> [Int32: UInt64] {
        var counts: [Int32: UInt64] = [:]
        var current: Int32?
        for line in lines {
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard let first = words.first else { continue }
            if first == "PID", words.count > 1 {
                current = Int32(words[1])
            } else if first.hasPrefix("Th"), let current, let last = words.last, words.count >= 2,
                first.dropFirst(2).allSatisfy(\.isNumber), let count = UInt64(last.filter { $0 != "," })
            {
                counts[current, default: 0] += count
            }
        }
        return counts
    }
}
