import Foundation
import GRDB
import KeychainTestSupport
import Testing

/// How long the reliability runs are: short in `swift test` (CI), long with
/// `TROUSSEAU_LONG_RUNS=1` (scripts/reliability). Each test prints one `reliability:`
/// line with what it did, which docs/RELIABILITY.md's table is made from.
enum RunLength {
    static let isLong = ProcessInfo.processInfo.environment["TROUSSEAU_LONG_RUNS"] == "1"

    /// `short` in CI, `long` in a long run.
    static func pick(short: Int, long: Int) -> Int { isLong ? long : short }

    /// Prints the test's figures for the table.
    static func report(_ name: String, _ figures: String, since start: ContinuousClock.Instant) {
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let backend = SoftwareTPM.suiteTPM == nil ? "" : ", TPM backend (swtpm)"
        print("reliability: \(name) | \(figures) | \(String(format: "%.1f", seconds)) s | \(isLong ? "long" : "short")\(backend)")
    }
}

extension DaemonKeychain {
    /// `PRAGMA integrity_check` of the database, read beside the running daemon.
    func integrityCheck() throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: paths.database, configuration: configuration)
        return try queue.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "" }
    }
}

/// A flag one thread sets and others poll.
final class StopFlag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stopped = false
    var isSet: Bool { lock.withLock { stopped } }
    func set() { lock.withLock { stopped = true } }
}
