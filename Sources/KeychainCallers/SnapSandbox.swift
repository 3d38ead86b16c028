#if canImport(Glibc)
import Glibc
#endif

/// What a process's cgroups say of a Snap sandbox, read as xdg-desktop-portal reads them
/// (`xdp-app-info-snap.c`): snapd starts every confined app in a systemd unit named
/// `snap.<instance>.<app>…` (`snap.firefox.firefox-<uuid>.scope`), which the confined app
/// cannot leave; a path of the freezer, `name=systemd` or unified hierarchy holding `/snap.`
/// marks a Snap. The portal then asks `snap routine portal-info` for the instance name; the
/// unit's name carries the same one, which is read here (no snapd to ask on Debian).
enum SnapSandbox {
    /// What a process's `/proc/PID/cgroup` says.
    enum Info: Equatable {
        /// No unit of snapd's: not a Snap app.
        case notSandboxed
        /// A Snap app, by its instance name (`firefox`, `firefox_beta`).
        case snap(String)
        /// A Snap's unit whose name gives no valid instance name: refused, never taken for
        /// an unsandboxed program.
        case unnamed
        /// The file could not be read (the process's cgroups cannot be looked into): refused.
        case unreadable(Int32)
    }

    static func info(pid: Int32) -> Info {
        info(cgroupAtPath: "/proc/\(pid)/cgroup")
    }

    /// The file at `path` (about 64 KiB at most are read; a process's cgroup file is a few lines).
    static func info(cgroupAtPath path: String) -> Info {
        switch ProcFile.read(path, limit: 1 << 16) {
        case .bytes(let bytes): return info(cgroup: String(decoding: bytes, as: UTF8.self))
        case .failed(let code): return .unreadable(code)
        }
    }

    /// The lines of a `/proc/PID/cgroup` (`ID:CONTROLLERS:PATH`).
    static func info(cgroup text: String) -> Info {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, ["freezer", "name=systemd", ""].contains(fields[1]), fields[2].contains("/snap.") else { continue }
            // The unit: the first path component named `snap.<instance>.…`.
            guard let unit = fields[2].split(separator: "/").first(where: { $0.hasPrefix("snap.") }) else { return .unnamed }
            let instance = String(unit.dropFirst("snap.".count).prefix { $0 != "." })
            return isValidInstanceName(instance) ? .snap(instance) : .unnamed
        }
        return .notSandboxed
    }

    /// Whether `name` is a snap instance name: a snap name (2–40 of `a-z`, `0-9`, `-`, with a
    /// letter, neither starting nor ending with `-` nor holding `--`), then optionally `_` and
    /// an instance key (1–10 of `a-z`, `0-9`) — snapd's `ValidateInstanceName`.
    static func isValidInstanceName(_ name: String) -> Bool {
        let parts = name.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        let snap = parts[0]
        guard (2...40).contains(snap.utf8.count), !snap.hasPrefix("-"), !snap.hasSuffix("-"), !snap.contains("--"),
            snap.utf8.allSatisfy({ isLowerOrDigit($0) || $0 == UInt8(ascii: "-") }), snap.utf8.contains(where: { (97...122).contains($0) })
        else { return false }
        guard parts.count == 2 else { return true }
        return (1...10).contains(parts[1].utf8.count) && parts[1].utf8.allSatisfy(isLowerOrDigit)
    }

    private static func isLowerOrDigit(_ byte: UInt8) -> Bool {
        (97...122).contains(byte) || (48...57).contains(byte)
    }
}
