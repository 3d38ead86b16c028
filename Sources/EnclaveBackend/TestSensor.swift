import FoundationEssentials
import KeychainModel
import KeychainSystem
import EnclaveProtocol

#if canImport(Glibc)
import Glibc
#endif

#if TROUSSEAU_TEST_HOOKS
// Test builds only: a release build contains no sensor it could be told to trust.

/// A scripted biometric sensor for tests, trusted only by an enclave of a test build started
/// with `--test-sensor DIR`. In `DIR`, the file `enrolled` lists one template per
/// line, and the file `scans` one outcome per line, taken in order: `match TEMPLATE`,
/// `nomatch` or `cancel`. With no scan left, a scan is cancelled (nobody touched it).
public struct TestSensor: BiometricSensor {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func enrolledTemplates() throws -> [String] {
        lines(of: "enrolled")
    }

    public func scan(reason: String) throws -> BiometricScan {
        var scans = lines(of: "scans")
        guard !scans.isEmpty else { return .cancelled }
        let next = scans.removeFirst()
        try write(scans, to: "scans")
        let words = next.split(separator: " ")
        switch words.first {
        case "match" where words.count == 2: return .match(template: String(words[1]))
        case "nomatch": return .noMatch
        default: return .cancelled
        }
    }

    private func lines(of name: String) -> [String] {
        guard let text = try? PrivateFile.read(directory + "/" + name) else { return [] }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    private func write(_ lines: [String], to name: String) throws {
        let text = lines.map { $0 + "\n" }.joined()
        try PrivateFile.replace(directory + "/" + name, with: Data(text.utf8))
    }
}
#endif
