import KeychainModel
import KeychainProtocol
import KeychainCallers

/// Whose keychain a securityd serves: a user's (only that user can reach its socket), or
/// the machine's System keychain, whose socket every user can reach.
public enum DaemonScope: Sendable, Equatable {
    case user
    /// The System keychain, run by `owner` (root, in a system unit).
    case system(owner: UInt32)
}

/// Who may do what in the System keychain (docs/SECURITY.md, "The System keychain"): root
/// and the daemon's own user may do everything they may do in a keychain of their own;
/// every other user may read its certificates — trust anchors are public — and nothing
/// else. The rule admits requests it knows and refuses the rest, so a request added later
/// is root's until someone decides otherwise here.
enum SystemKeychainPolicy {
    /// Whether `caller` is another user of the System keychain, whom ``admit(_:from:scope:)``
    /// lets read its certificates and nothing else.
    static func readsPublicCertificates(_ caller: Caller, scope: DaemonScope) -> Bool {
        guard case .system(let owner) = scope else { return false }
        return caller.uid != 0 && caller.uid != owner
    }

    static func admit<Request: ServiceRequest>(_ request: Request, from caller: Caller, scope: DaemonScope) throws {
        guard readsPublicCertificates(caller, scope: scope) else { return }
        if let read = request as? Service.CopyMatching {
            guard read.query[QueryKey.itemClass] == .string(ItemClass.certificate.rawValue) else {
                throw KeychainError(
                    status: OSStatusCode.interactionNotAllowed,
                    message: "only the System keychain's certificates can be read by users other than root (use sudo)")
            }
            guard read.query[QueryKey.matchSearchList] == nil, read.query[QueryKey.useKeychain] == nil else {
                throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "only the System keychain itself can be read by users other than root")
            }
            return
        }
        if request is Service.CopyProfiles {
            throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the System keychain's profiles are listed by root (use sudo)")
        }
        throw KeychainError(status: OSStatusCode.wrPerm, message: "the System keychain is root's to change (use sudo)")
    }
}
