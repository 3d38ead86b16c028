import Foundation

/// Instructions per operation in each process, as measured or as committed in the baseline.
public struct InstructionReport: Codable, Equatable, Sendable {
    /// Items in the keychain the operations ran on.
    public var items: Int
    /// Operations each row counts (after warm-up ones that it does not).
    public var operations: Int
    /// Operations run uncounted before each row's counted ones.
    public var warmUp: Int
    public var rows: [InstructionRow]

    public init(items: Int, operations: Int, warmUp: Int, rows: [InstructionRow]) {
        self.items = items
        self.operations = operations
        self.warmUp = warmUp
        self.rows = rows
    }

    /// Growth allowed before the check fails: 3 %, plus a few instructions per operation
    /// (``InstructionRow/Process/slack``) for what depends on the wall clock.
    public static let allowedGrowth = 0.03

    /// What the check says about `measured` against this baseline: one line per process and
    /// row that grew beyond the allowance (failures) or shrank beyond it (notes: the
    /// baseline can be lowered).
    public func compare(_ measured: InstructionReport) -> (failures: [String], notes: [String]) {
        var failures: [String] = []
        var notes: [String] = []
        if measured.items != items || measured.operations != operations || measured.warmUp != warmUp {
            failures.append(
                "measured at \(measured.items) items × \(measured.operations) operations after \(measured.warmUp); the baseline at \(items) × \(operations) after \(warmUp)")
        }
        for row in rows {
            guard let now = measured.rows.first(where: { $0.operation == row.operation }) else {
                failures.append("\(row.operation): not measured")
                continue
            }
            for process in InstructionRow.Process.allCases {
                let (before, after) = (row[process], now[process])
                let limit = Double(before) * (1 + Self.allowedGrowth) + Double(process.slack)
                let change = before == 0 ? "" : String(format: " (%+.1f %%)", (Double(after) / Double(before) - 1) * 100)
                let line = "\(row.operation), \(process.rawValue): \(after) instructions against \(before)\(change)"
                if Double(after) > limit {
                    failures.append(line)
                } else if after == 0, before > process.slack {
                    failures.append(line + ": nothing counted (was the process reached?)")
                } else if Double(after) < Double(before) * (1 - Self.allowedGrowth) - Double(process.slack) {
                    notes.append(line)
                }
            }
        }
        for row in measured.rows where !rows.contains(where: { $0.operation == row.operation }) {
            failures.append("\(row.operation): not in the baseline")
        }
        return (failures, notes)
    }
}

/// One operation's instructions per operation in securityd, its enclave and the client.
public struct InstructionRow: Codable, Equatable, Sendable {
    public var operation: String
    public var securityd: Int
    public var enclave: Int
    public var client: Int

    public init(operation: String, securityd: Int, enclave: Int, client: Int) {
        self.operation = operation
        self.securityd = securityd
        self.enclave = enclave
        self.client = client
    }

    public enum Process: String, CaseIterable, Sendable {
        case securityd, enclave, client

        /// Instructions per operation a row may vary by whatever the count: securityd asks
        /// the enclave for a class's metadata key again once its cached copy is a second old,
        /// so how often follows the wall clock (callgrind's pace, the host's load). The
        /// enclave's derivation is not counted (keychain-instructions toggles collection off
        /// in it); the request, the reply and securityd's side of each fetch are. The client
        /// has no timers.
        public var slack: Int {
            switch self {
            case .securityd, .enclave: 1_000
            case .client: 200
            }
        }
    }

    public subscript(process: Process) -> Int {
        switch process {
        case .securityd: securityd
        case .enclave: enclave
        case .client: client
        }
    }
}
