import FoundationEssentials
import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// Failed-unlock accounting, kept in `KEYCHAIN_HOME/unlock.throttle` so that restarting the
/// enclave does not reset it. An attempt is counted before the passcode is checked, so
/// killing the enclave in the middle of a check does not give a free guess.
struct UnlockThrottle: Sendable {
    static let fileName = "unlock.throttle"

    var failures: UInt32 = 0
    var lastFailure: Double = 0  // seconds since 1970

    /// Seconds until the next attempt is allowed at `now`.
    func remainingDelay(at now: Double) -> Double {
        max(0, lastFailure + KeybagThrottleSchedule.delay(afterFailures: failures) - now)
    }

    static func load(from directory: String, fileName: String = Self.fileName) throws -> UnlockThrottle {
        guard let data = try PrivateFile.read(directory + "/" + fileName) else { return UnlockThrottle() }
        let bytes = Array(data)
        guard bytes.count == 12 else { throw KeychainError.decode("the unlock throttle file is damaged") }
        var throttle = UnlockThrottle()
        throttle.failures = bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
        throttle.lastFailure = Double(bitPattern: bytes[4..<12].reduce(0) { $0 << 8 | UInt64($1) })
        return throttle
    }

    /// Counts an attempt at `now` before the password is checked, once the delay allows one.
    ///
    /// - Returns: the throttle with the attempt counted (its `failures` include this one).
    /// - Throws: `errSecAuthFailed` while the delay runs.
    static func countAttempt(in directory: String, fileName: String = Self.fileName, at now: Double) throws -> UnlockThrottle {
        var throttle = try load(from: directory, fileName: fileName)
        let wait = throttle.remainingDelay(at: now)
        if wait > 0 {
            throw KeychainError(status: OSStatusCode.authFailed, message: "too many failed attempts; try again in \(Int(wait.rounded(.up))) seconds")
        }
        throttle.failures += 1
        throttle.lastFailure = now
        try throttle.save(to: directory, fileName: fileName)
        return throttle
    }

    /// Forgets the failures: the password was right.
    static func clear(in directory: String, fileName: String = Self.fileName) throws {
        try UnlockThrottle().save(to: directory, fileName: fileName)
    }

    func save(to directory: String, fileName: String = Self.fileName) throws {
        var out = Data()
        withUnsafeBytes(of: failures.bigEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: lastFailure.bitPattern.bigEndian) { out.append(contentsOf: $0) }
        try PrivateFile.replace(directory + "/" + fileName, with: out)
    }
}

/// How long failed unlocks make the next attempt wait.
public enum KeybagThrottleSchedule {
    /// The wait after `failures` consecutive failures: 1–4 free, then 1 min, 5 min, 15 min, 1 h.
    public static func delay(afterFailures failures: UInt32) -> Double {
        switch failures {
        case 0..<5: 0
        case 5: 60
        case 6: 300
        case 7: 900
        default: 3600
        }
    }
}
