import CSecretBus
import KeychainCallers
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Decides each bus connection's ``SecretScope`` once, from what the bus recorded when it
/// connected (its process and user), and forgets it when the connection goes.
///
/// A Flatpak app is recognised by the `/.flatpak-info` in its root, read through
/// `/proc/PID/root` of a process pinned by a pidfd that is checked to be alive after the
/// read (Debian 12's bus gives no pidfd of its own, so a process that exits and whose pid
/// is reused between the bus's answer and `pidfd_open` is the residual window; such a
/// caller would have to be the user's own unsandboxed code, which is trusted anyway).
/// Flatpak writes that file from outside the sandbox and its seccomp filter keeps apps
/// from mounting over it.
public struct CallerScopes: Sendable {
    /// A signed app's entitled access groups, from the executable of `pid` (securityd's
    /// code-signing check), or nil for an unsigned program.
    public typealias SignedGroups = @Sendable (_ pid: Int32) -> [String]?

    private let signedGroups: SignedGroups?
    private let portalExecutables: [String]

    /// - Parameter portalExecutables: where xdg-desktop-portal is (the only caller of the
    ///   portal back end).
    public init(signedGroups: SignedGroups? = nil, portalExecutables: [String] = CallerScopes.portalExecutables) {
        self.signedGroups = signedGroups
        self.portalExecutables = portalExecutables
    }

    /// Where Debian and other distributions install xdg-desktop-portal.
    public static let portalExecutables = ["/usr/libexec/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal"]

    /// Whether the connection `name` is xdg-desktop-portal: an unsandboxed process of the user
    /// running one of the portal's executables.
    func isPortal(_ name: String, bus: OpaquePointer) throws -> Bool {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard trousseau_bus_peer(bus, name, &pid, &uid) >= 0, pid > 0, uid == geteuid() else { return false }
        guard let process = PinnedProcess(pid: pid, uid: uid) else { return false }
        guard Self.sandboxInfo(pid: pid) == .notSandboxed else { return false }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return false }
        let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return portalExecutables.contains(executable) && process.isRunning
    }

    /// The scope of the connection `name`, or an error that refuses it.
    func scope(of name: String, bus: OpaquePointer) throws -> SecretScope {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        let result = trousseau_bus_peer(bus, name, &pid, &uid)
        guard result >= 0, pid > 0 else { throw BusError.accessDenied("the bus does not say which process \(name) is (\(result))") }
        guard uid == geteuid() else { throw BusError.accessDenied("the caller is another user") }
        guard let process = PinnedProcess(pid: pid, uid: uid) else { throw BusError.accessDenied("the calling process has gone") }
        let info: [UInt8]?
        switch Self.sandboxInfo(pid: pid) {
        case .notSandboxed: info = nil
        case .flatpak(let bytes): info = bytes
        case .unreadable(let code):
            // Fails closed: a root that cannot be looked into may be a sandbox's.
            throw BusError.accessDenied("cannot tell whether the caller is sandboxed (its /.flatpak-info: \(String(cString: strerror(code))))")
        }
        let signed = info == nil ? signedGroups?(pid) : nil
        // Everything read above was of the pinned process only if it is still running.
        guard process.isRunning else { throw BusError.accessDenied("the calling process has gone") }
        if let info {
            guard let appID = Self.applicationID(in: info) else {
                throw BusError.accessDenied("the sandbox's /.flatpak-info names no valid application")
            }
            return .flatpak(appID)
        }
        if let signed, let scope = SecretScope.signed(signed) { return scope }
        return .host
    }

    /// What a process's root says of its sandbox.
    enum SandboxInfo: Equatable {
        /// No `/.flatpak-info`: not a Flatpak app.
        case notSandboxed
        /// The file's bytes (at most 1 MiB).
        case flatpak([UInt8])
        /// The file is there but could not be read (a symlink, a directory, no access to the
        /// process's root): the caller is refused, never taken for an unsandboxed program.
        case unreadable(Int32)
    }

    /// `/.flatpak-info` in the root of `pid`.
    private static func sandboxInfo(pid: Int32) -> SandboxInfo {
        sandboxInfo(atPath: "/proc/\(pid)/root/.flatpak-info")
    }

    /// The file at `path`: only its absence (ENOENT) means "no sandbox".
    static func sandboxInfo(atPath path: String) -> SandboxInfo {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .notSandboxed : .unreadable(errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable(errno)
            }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return .flatpak(bytes)
    }

    /// `name=` of the `[Application]` group of a `.flatpak-info` (a GKeyFile), when it is a
    /// valid application id (D-Bus name rules: letters, digits, `_`, `-`, dots, ≤ 255).
    static func applicationID(in info: [UInt8]) -> String? {
        guard let text = String(validating: info, as: UTF8.self) else { return nil }
        var group = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = line.trimmingCharacters(in: " \t\r")
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if group == "Application", line.hasPrefix("name=") {
                let id = String(line.dropFirst(5))
                return isValidApplicationID(id) ? id : nil
            }
        }
        return nil
    }
}

extension CallerScopes {
    /// Whether `id` is a valid application id (D-Bus name rules: letters, digits, `_`, `-`,
    /// at least two dot-separated elements, at most 255 bytes).
    static func isValidApplicationID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.contains(".")
            && id.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
            && !id.hasPrefix(".") && !id.hasSuffix(".") && !id.contains("..")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
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
