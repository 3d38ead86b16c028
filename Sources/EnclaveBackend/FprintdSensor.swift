import FoundationEssentials
import KeychainModel
import KeychainSystem
import EnclaveProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The Linux fingerprint daemon, through its command-line clients `fprintd-list` and
/// `fprintd-verify` (fprintd verifies in its own privileged process; the enclave trusts its
/// verdict as it would a sensor's). fprintd names enrolled fingers but does not expose
/// template identities, so re-enrolling the same finger is not seen as an enrollment change.
public struct FprintdSensor: BiometricSensor {
    let list: String
    let verify: String

    /// The sensor, when fprintd's clients are installed.
    public static func installed(in directory: String = "/usr/bin") -> FprintdSensor? {
        let list = directory + "/fprintd-list"
        let verify = directory + "/fprintd-verify"
        guard access(list, X_OK) == 0, access(verify, X_OK) == 0 else { return nil }
        return FprintdSensor(list: list, verify: verify)
    }

    public func enrolledTemplates() throws -> [String] {
        let (status, output) = try Self.run(list, [Self.userName])
        guard status == 0 else { throw KeychainError(status: OSStatusCode.notAvailable, message: "fprintd-list failed") }
        // " - #0: right-index-finger"
        return output.split(separator: "\n").compactMap { line in
            let text = line.drop { $0 == " " || $0 == "\t" }
            guard text.hasPrefix("- #"), let colon = text.firstIndex(of: ":") else { return nil }
            return String(text[text.index(after: colon)...].filter { $0 != " " && $0 != "\t" })
        }
    }

    public func scan(reason: String) throws -> BiometricScan {
        let (_, output) = try Self.run(verify, [Self.userName])
        if output.contains("verify-match") { return .match(template: "fprintd") }
        if output.contains("verify-no-match") { return .noMatch }
        return .cancelled
    }

    private static var userName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return String(getuid()) }
        return String(cString: name)
    }

    /// Runs `program` with `arguments`; its exit status and standard output.
    private static func run(_ program: String, _ arguments: [String]) throws -> (Int32, String) {
        let (status, output) = try Spawn.capturingOutput(
            program, arguments: arguments, environment: ProcessInfo.processInfo.environment, standardInput: .null,
            standardError: .null, failure: OSStatusCode.notAvailable
        ) { Spawn.readAll($0) }
        return (status, String(decoding: output, as: UTF8.self))
    }
}
