#if canImport(Glibc)
import Glibc
#endif

/// What a process's root says of a Flatpak sandbox: `/.flatpak-info`, which Flatpak writes
/// from outside the sandbox and its seccomp filter keeps apps from mounting over.
enum FlatpakSandbox {
    /// What a process's root says of its sandbox.
    enum Info: Equatable {
        /// No `/.flatpak-info`: not a Flatpak app.
        case notSandboxed
        /// The file's bytes (at most 1 MiB).
        case flatpak([UInt8])
        /// The file is there but could not be read (a symlink, a directory, no access to the
        /// process's root): the caller is refused, never taken for an unsandboxed program.
        case unreadable(Int32)
    }

    /// `/.flatpak-info` in the root of `pid`.
    static func info(pid: Int32) -> Info {
        info(atPath: "/proc/\(pid)/root/.flatpak-info")
    }

    /// The file at `path`: only its absence (ENOENT) means "no sandbox".
    static func info(atPath path: String) -> Info {
        switch ProcFile.read(path, limit: 1 << 20, noFollow: true) {
        case .bytes(let bytes): return .flatpak(bytes)
        case .failed(let code): return code == ENOENT ? .notSandboxed : .unreadable(code)
        }
    }

    /// `name=` of the `[Application]` group of a `.flatpak-info` (a GKeyFile), when it is a
    /// valid application id.
    static func applicationID(in info: [UInt8]) -> String? {
        guard let text = String(validating: info, as: UTF8.self) else { return nil }
        var group = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = line.trimming(" \t\r")
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if group == "Application", line.hasPrefix("name=") {
                let id = String(line.dropFirst(5))
                return isValidApplicationID(id) ? id : nil
            }
        }
        return nil
    }

    /// Whether `id` is a valid application id (D-Bus name rules: letters, digits, `_`, `-`,
    /// at least two dot-separated elements, at most 255 bytes).
    static func isValidApplicationID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.contains(".")
            && id.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
            && !id.hasPrefix(".") && !id.hasSuffix(".") && !id.contains("..")
    }
}

extension Substring {
    fileprivate func trimming(_ set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self)
    }
}
