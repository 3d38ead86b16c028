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
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw KeychainError(status: OSStatusCode.notAvailable, message: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, nil, argv, environ)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard result == 0 else { throw KeychainError(status: OSStatusCode.notAvailable, message: "cannot run \(program)") }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(pipeFDs[0], &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return ((status >> 8) & 0xff, String(decoding: output, as: UTF8.self))
    }
}
