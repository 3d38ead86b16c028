#if canImport(Glibc)
import Glibc
#endif

/// The executable a process runs, from `/proc/PID/exe`.
public enum ProcessExecutable {
    /// The path of the file process `pid` runs (this process when nil), or nil when
    /// /proc does not say (the process is gone, or not ours).
    public static func path(of pid: Int32? = nil) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/\(pid.map(String.init) ?? "self")/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `name` in the directory of this process's executable: where Trousseau's programs
    /// find each other (`security` → `securityd` → `trousseau-enclave`).
    public static func sibling(_ name: String) -> String {
        let executable = path() ?? ""
        return (executable.lastIndex(of: "/").map { String(executable[..<$0]) } ?? ".") + "/" + name
    }
}
