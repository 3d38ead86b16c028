/// What `callgrind_control -e Ir` prints about running processes, read.
public enum CallgrindCounters {
    /// The instructions in `callgrind_control -e Ir`'s output, per process: "PID n: command",
    /// then "Totals: Ir", then "Th 1  25,372,596" for each thread.
    public static func parse(_ lines: [Substring]) -> [Int32: UInt64] {
        var counts: [Int32: UInt64] = [:]
        var current: Int32?
        for line in lines {
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            if words.first == "PID", words.count > 1 {
                current = Int32(words[1])
                if let current { counts[current] = 0 }
            } else if words.first == "Th", words.count == 3, let current, let count = UInt64(words[2].filter { $0 != "," }) {
                counts[current, default: 0] += count
            }
        }
        return counts
    }
}
