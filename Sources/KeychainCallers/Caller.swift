public import CodeSigning
import FoundationEssentials
import KeychainCrypto

/// Who is on the other end of a connection, and the access groups that gives it. Only
/// ``CallerIdentification`` makes one (and tests, through `@testable import`).
public struct Caller: Sendable {
    public let pid: Int32
    public let uid: UInt32
    /// `/proc/PID/exe` when the connection was identified.
    public let executable: String
    /// The signature's verdict on the executable (and on the process running it).
    public let code: CodeIdentity
    public let role: Role
    public let accessGroups: AccessGroups

    init(pid: Int32, uid: UInt32, executable: String, code: CodeIdentity, role: Role, accessGroups: AccessGroups) {
        self.pid = pid
        self.uid = uid
        self.executable = executable
        self.code = code
        self.role = role
        self.accessGroups = accessGroups
    }

    public enum Role: Sendable {
        case application
        /// The `security` tool installed beside securityd: it has a group of its own, may
        /// list every item's attributes, and reaches other groups' secrets and items with
        /// the user's presence; it alone manages the keychain's password, settings and
        /// local developer root.
        case securityTool
        /// The Keychain Access window (`keychain-access`) installed beside securityd: the
        /// `security` tool's reach and group — a person at a window does what they could at
        /// the tool — and nothing more; every reveal there carries the keychain passcode.
        case keychainAccess

        /// Whether the role reaches as the `security` tool does (its group, every item's
        /// attributes, other groups' with the user's presence, the keychain's own requests).
        public var hasSecurityToolReach: Bool { self != .application }
    }

    /// The `security` tool's own access group, in Trousseau's reserved namespace.
    public static let securityToolGroup = "trousseau.security"

    /// The implicit access group of an unsigned executable: "unsigned." and 16 hex digits
    /// of SHA-256 of its path, so the database does not list the paths of the user's programs.
    public static func implicitGroup(for executable: String) -> String {
        "unsigned." + Fingerprint.sha256Hex(Data(executable.utf8)).prefix(16)
    }
}
