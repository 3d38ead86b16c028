import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Secret Service callers: D-Bus peers, whose process and user the bus recorded when they
/// connected. Their scope (``SecretScope``) is decided here, from the process pinned by a
/// pidfd and checked to be alive after everything is read (Debian 12's bus gives no pidfd of
/// its own, so a process that exits and whose pid is reused between the bus's answer and
/// `pidfd_open` is the residual window; such a caller would have to be the user's own
/// unsandboxed code, which is trusted anyway).
extension CallerIdentification {
    /// Where Debian and other distributions install xdg-desktop-portal.
    public static let portalExecutables = ["/usr/libexec/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal"]

    /// The scope of bus peer `pid` of user `uid`: a Flatpak app's own (its `/.flatpak-info`),
    /// a Snap app's own (its systemd unit), a signed app's entitled groups, else the host's.
    ///
    /// - Throws: `errSecMissingEntitlement` for another user, a process that has gone, a
    ///   root that cannot be looked into (it may be a sandbox's), or a sandbox naming no
    ///   valid application.
    public func secretServiceScope(pid: Int32, uid: UInt32) throws -> SecretScope {
        guard uid == geteuid() else { throw Self.refused("the caller is another user") }
        guard let process = PinnedProcess(pid: pid, uid: uid) else { throw PinnedProcess.gone(pid) }
        let info: [UInt8]?
        switch FlatpakSandbox.info(pid: pid) {
        case .notSandboxed: info = nil
        case .flatpak(let bytes): info = bytes
        case .unreadable(let code):
            // Fails closed: a root that cannot be looked into may be a sandbox's.
            throw Self.refused("cannot tell whether the caller is sandboxed (its /.flatpak-info: \(String(cString: strerror(code))))")
        }
        // A Snap app: its unit's name (as xdg-desktop-portal tells one; SnapSandbox).
        let snap: String?
        switch info == nil ? SnapSandbox.info(pid: pid) : .notSandboxed {
        case .notSandboxed: snap = nil
        case .snap(let name): snap = name
        case .unnamed: throw Self.refused("the caller's Snap unit names no valid snap")
        case .unreadable(let code):
            throw Self.refused("cannot tell whether the caller is sandboxed (its cgroups: \(String(cString: strerror(code))))")
        }
        let signed = info == nil && snap == nil ? signedAccessGroups(pid: pid) : nil
        // Everything read above was of the pinned process only if it is still running.
        guard process.isRunning else { throw PinnedProcess.gone(pid) }
        if let info {
            guard let appID = FlatpakSandbox.applicationID(in: info), let scope = SecretScope.flatpak(appID) else {
                throw Self.refused("the sandbox's /.flatpak-info names no valid application")
            }
            return scope
        }
        if let snap {
            guard let scope = SecretScope.snap(snap) else { throw Self.refused("the caller's Snap unit names no valid snap") }
            return scope
        }
        if let signed, let scope = SecretScope.signed(signed) { return scope }
        return .host
    }

    /// Whether bus peer `pid` of user `uid` is xdg-desktop-portal: an unsandboxed process of
    /// the user running one of `executables`.
    public func isPortal(pid: Int32, uid: UInt32, executables: [String]) -> Bool {
        guard uid == geteuid(), let process = PinnedProcess(pid: pid, uid: uid) else { return false }
        guard FlatpakSandbox.info(pid: pid) == .notSandboxed, SnapSandbox.info(pid: pid) == .notSandboxed, let executable = ProcessExecutable.path(of: pid) else { return false }
        return executables.contains(executable) && process.isRunning
    }

    private static func refused(_ reason: String) -> KeychainError {
        KeychainError(status: OSStatusCode.missingEntitlement, message: reason)
    }
}
