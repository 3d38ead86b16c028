import CodeSigning
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Identifies the peers of connections: the process that connected, pinned by a pidfd
/// (``PinnedProcess``), then the executable it runs, its code signature (verified once per
/// file), and the state of the process — all read while the pin shows it still runs.
public final class CallerIdentification: Sendable {
    private let signatures: CodeIdentityCache
    private let securityTool: String?
    private let keychainAccess: String?
    private let admitsOtherUsers: Bool

    /// - Parameters:
    ///   - rootDirectories: where trusted developer roots are (the user's and the system's).
    ///   - securityTool: the path of the `security` tool that gets its role: the one
    ///     installed beside securityd (as trusted as securityd's own directory).
    ///   - keychainAccess: the path of the `keychain-access` window that gets its role, found
    ///     as the tool is.
    ///   - admitsOtherUsers: identify other users' processes too (the System keychain,
    ///     whose policy then decides by uid) instead of refusing them.
    public init(rootDirectories: [String], securityTool: String?, keychainAccess: String? = nil, admitsOtherUsers: Bool = false) {
        signatures = CodeIdentityCache(rootDirectories: rootDirectories)
        self.securityTool = securityTool
        self.keychainAccess = keychainAccess
        self.admitsOtherUsers = admitsOtherUsers
    }

    /// Identifies the peer of a connected Unix socket.
    ///
    /// - Throws: `errSecMissingEntitlement` for a peer of another user (unless admitted) or one
    ///   that exited before it was identified; `errSecIO` when its credentials or executable
    ///   cannot be read.
    public func identify(connection fd: Int32) throws -> Caller {
        let process = try PinnedProcess.peer(ofConnection: fd, peerPidfd: Self.usesPeerPidfd)
        let (pid, uid) = (process.pid, process.uid)
        guard uid == getuid() || admitsOtherUsers else {
            throw KeychainError(status: OSStatusCode.missingEntitlement, message: "a process of another user (uid \(uid)) is refused")
        }
        guard let executable = ProcessExecutable.path(of: pid) else {
            throw process.isRunning ? SystemCall.ioError("cannot read the executable of pid \(pid)") : PinnedProcess.gone(pid)
        }
        let exe = open("/proc/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        guard exe >= 0 else {
            throw process.isRunning ? SystemCall.ioError("cannot open the executable of pid \(pid)") : PinnedProcess.gone(pid)
        }
        defer { close(exe) }
        var code = try signatures.identity(ofExecutable: exe)
        let toolRole: Caller.Role? =
            if securityTool.map({ Self.isFile(exe, at: $0) }) == true { .securityTool }
            else if keychainAccess.map({ Self.isFile(exe, at: $0) }) == true { .keychainAccess }
            else { nil }
        let isTool = toolRole != nil
        let tampering = isTool || code.isSigned ? ProcessInspection.tampering(pid: pid) : nil
        // Everything above was read from /proc/PID: it was the caller's only if the caller
        // still runs (else PID may name another process by now).
        guard process.isRunning else { throw PinnedProcess.gone(pid) }
        // A traced or preloaded process may not be running the code its file holds.
        if let tampering {
            code = .unsigned(reason: "\(isTool ? "the security tool's role" : "its signature") cannot vouch for the process: \(tampering)")
        } else if let toolRole {
            return Caller(pid: pid, uid: uid, executable: executable, code: code, role: toolRole,
                          accessGroups: AccessGroups([Caller.securityToolGroup]))
        }
        let groups: [String]
        switch code {
        case .signed(let signed):
            groups = signed.entitlements.accessGroups
        case .unsigned(let reason):
            if reason != CodeSignatureVerifier.noSignature {
                DaemonLog.logger.warning("pid \(pid) (\(executable)) is treated as unsigned: \(reason)")
            }
            groups = [Caller.implicitGroup(for: executable)]
        }
        return Caller(pid: pid, uid: uid, executable: executable, code: code, role: .application, accessGroups: AccessGroups(groups))
    }

    /// The entitled access groups of process `pid` when it runs a signed executable that
    /// nothing tampers with, else nil: how the Secret Service tells a signed app (a D-Bus
    /// peer, already checked to be the user's) from the host's other programs.
    func signedAccessGroups(pid: Int32) -> [String]? {
        let exe = open("/proc/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        guard exe >= 0 else { return nil }
        defer { close(exe) }
        guard case .signed(let signed)? = try? signatures.identity(ofExecutable: exe),
            ProcessInspection.tampering(pid: pid) == nil
        else { return nil }
        let groups = signed.entitlements.accessGroups
        return groups.isEmpty ? nil : groups
    }

    /// Whether callers are pinned by the kernel's pidfd of the connecting process where the
    /// kernel has one (a test build can try the older kernels' path instead).
    static var usesPeerPidfd: Bool {
        #if TROUSSEAU_TEST_HOOKS
        TestHook.noPeerPidfd.value != "1"
        #else
        true
        #endif
    }

    /// Whether the open file `fd` is the file at `path` (same device and inode).
    private static func isFile(_ fd: Int32, at path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(fd, &open) == 0 && stat(path, &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }
}
