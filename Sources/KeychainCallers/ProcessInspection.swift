import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about a caller beyond its executable: whether something could have
/// changed its code after exec — a tracer attached, or a library preloaded by the
/// dynamic loader. Either makes a signed caller unsigned.
enum ProcessInspection {
    /// Loader variables that inject code into a process before its own runs.
    static let injectingVariables = ["LD_PRELOAD", "LD_AUDIT"]

    /// Why the process's signature cannot vouch for its code, or nil.
    static func tampering(pid: Int32) -> String? {
        guard let status = read("/proc/\(pid)/status") else { return "its /proc status is unreadable" }
        let tracer = String(decoding: status, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("TracerPid:") }
            .flatMap { Int32($0.dropFirst("TracerPid:".count).drop { $0 == " " || $0 == "\t" }) }
        guard let tracer else { return "its /proc status names no TracerPid" }
        if tracer != 0 { return "it is traced by pid \(tracer)" }
        // The environment at exec, which is what the dynamic loader read.
        guard let environment = read("/proc/\(pid)/environ") else { return "its environment is unreadable" }
        for entry in environment.split(separator: 0) {
            for variable in injectingVariables {
                let prefix = Array((variable + "=").utf8)
                if entry.starts(with: prefix), entry.count > prefix.count {
                    return "it was started with \(variable)"  // the value is the user's business, not the log's
                }
            }
        }
        return nil
    }

    private static func read(_ path: String) -> [UInt8]? {
        guard case .bytes(let bytes) = ProcFile.read(path) else { return nil }
        return bytes
    }
}
