internal import CSystemShims
public import CodeSigning
import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a connection, and the access groups that gives it.
public struct Caller: Sendable {
    public let pid: Int32
    public let uid: UInt32
    /// `/proc/PID/exe` when the connection was identified.
    public let executable: String
    /// The signature's verdict on the executable (and on the process running it).
    public let code: CodeIdentity
    public let role: Role
    public let accessGroups: AccessGroups

    public enum Role: Sendable {
        case application
        /// The `security` tool installed beside securityd: it has a group of its own, may
        /// list every item's attributes, and reaches other groups' secrets and items with
        /// the user's presence; it alone manages the keychain's password, settings and
        /// local developer root.
        case securityTool
    }

    /// The `security` tool's own access group, in Trousseau's reserved namespace.
    public static let securityToolGroup = "trousseau.security"

    /// The implicit access group of an unsigned executable: "unsigned." and 16 hex digits
    /// of SHA-256 of its path, so the database does not list the paths of the user's programs.
    public static func implicitGroup(for executable: String) -> String {
        "unsigned." + Fingerprint.sha256Hex(Data(executable.utf8)).prefix(16)
    }
}

/// Identifies the peers of connections: SO_PEERCRED, then the executable the process
/// runs, its code signature (verified once per file), and the state of the process.
public final class CallerIdentification: Sendable {
    private let signatures: CodeIdentityCache
    private let securityTool: String?
    private let admitsOtherUsers: Bool

    /// - Parameters:
    ///   - rootDirectories: where trusted developer roots are (the user's and the system's).
    ///   - securityTool: the path of the `security` tool that gets its role: the one
    ///     installed beside securityd (as trusted as securityd's own directory).
    ///   - admitsOtherUsers: identify other users' processes too (the System keychain,
    ///     whose policy then decides by uid) instead of refusing them.
    public init(rootDirectories: [String], securityTool: String?, admitsOtherUsers: Bool = false) {
        signatures = CodeIdentityCache(rootDirectories: rootDirectories)
        self.securityTool = securityTool
        self.admitsOtherUsers = admitsOtherUsers
    }

    /// Identifies the peer of a connected Unix socket.
    ///
    /// - Throws: `errSecMissingEntitlement` for a peer of another user (unless admitted), `errSecIO` when
    ///   its credentials or executable cannot be read.
    public func identify(connection fd: Int32) throws -> Caller {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard trousseau_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            throw SystemCall.ioError("SO_PEERCRED")
        }
        guard uid == getuid() || admitsOtherUsers else {
            throw KeychainError(status: OSStatusCode.missingEntitlement, message: "a process of another user (uid \(uid)) is refused")
        }
        guard let executable = ProcessExecutable.path(of: pid) else {
            throw SystemCall.ioError("cannot read the executable of pid \(pid)")
        }
        let exe = open("/proc/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        guard exe >= 0 else {
            throw SystemCall.ioError("cannot open the executable of pid \(pid)")
        }
        defer { close(exe) }
        var code = try signatures.identity(ofExecutable: exe)
        let isTool = securityTool.map { Self.isFile(exe, at: $0) } ?? false
        // A traced or preloaded process may not be running the code its file holds.
        if isTool || code.isSigned, let tampering = ProcessInspection.tampering(pid: pid) {
            code = .unsigned(reason: "\(isTool ? "the security tool's role" : "its signature") cannot vouch for the process: \(tampering)")
        } else if isTool {
            return Caller(pid: pid, uid: uid, executable: executable, code: code, role: .securityTool,
                          accessGroups: AccessGroups([Caller.securityToolGroup]))
        }
        let groups: [String]
        switch code {
        case .signed(let signed):
            groups = signed.entitlements.accessGroups
        case .unsigned(let reason):
            if reason != CodeSignatureVerifier.noSignature {
                DaemonLog.write("pid \(pid) (\(executable)) is treated as unsigned: \(reason)")
            }
            groups = [Caller.implicitGroup(for: executable)]
        }
        return Caller(pid: pid, uid: uid, executable: executable, code: code, role: .application, accessGroups: AccessGroups(groups))
    }

    /// The entitled access groups of process `pid` when it runs a signed executable that
    /// nothing tampers with, else nil: how the Secret Service tells a signed app (a D-Bus
    /// peer, already checked to be the user's) from the host's other programs.
    public func signedAccessGroups(pid: Int32) -> [String]? {
        let exe = open("/proc/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        guard exe >= 0 else { return nil }
        defer { close(exe) }
        guard case .signed(let signed)? = try? signatures.identity(ofExecutable: exe),
            ProcessInspection.tampering(pid: pid) == nil
        else { return nil }
        let groups = signed.entitlements.accessGroups
        return groups.isEmpty ? nil : groups
    }

    /// Whether the open file `fd` is the file at `path` (same device and inode).
    private static func isFile(_ fd: Int32, at path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(fd, &open) == 0 && stat(path, &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }
}
