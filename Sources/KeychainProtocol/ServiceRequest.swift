public import FoundationEssentials
public import KeychainModel

/// A request a client sends to securityd, with its response type, its place on the wire
/// and who may send it.
///
/// Adding a request: declare a type conforming to this protocol (its fields, its codec,
/// its ``Response`` and its ``authorization``) in `Requests/`, list it in
/// ``ServiceCatalog/requests``, and write its handler in `KeychainServer` (a conformance to
/// `ServedRequest`). A request without an ``authorization`` does not compile; one without
/// a handler is refused when the daemon starts (and by a test).
public protocol ServiceRequest: WireCodable {
    associatedtype Response: WireCodable
    /// Its number on the wire, unique in ``ServiceCatalog/requests``.
    static var opcode: UInt8 { get }
    /// Who may send it; securityd checks this before the handler runs.
    static var authorization: Authorization { get }

    /// The request with `kSecUseAuthenticationContext` set to `context` where it has none
    /// (item requests; others are returned as they are).
    func inContext(_ context: Data) -> Self
    /// `kSecUseOperationPrompt` of an item request.
    var operationPrompt: String? { get }
}

extension ServiceRequest {
    public func inContext(_ context: Data) -> Self { self }
    public var operationPrompt: String? { nil }
}

/// Who may send a request. securityd checks it for every request before its handler runs;
/// what a SecItem request may then touch is decided by the caller's access groups.
public enum Authorization: Sendable, Hashable {
    /// Any process of the user: the request carries its own authority (a query limited to
    /// the caller's groups, evidence the enclave checks, an escrow secret).
    case anyCaller
    /// Only the `security` tool installed beside securityd; `operation` names it in the
    /// refusal ("changing the keychain password is for the security tool").
    case securityTool(operation: String)
    /// Only the `security` tool, and once a keychain passcode is set only with the user's
    /// presence (the passcode, verified by the enclave, sent with the request).
    case securityToolWithPresence(operation: String)
}

/// The requests securityd understands, each once. The daemon serves exactly these; the
/// fuzz targets and the protocol tests walk them.
public enum ServiceCatalog {
    public static let requests: [any ServiceRequest.Type] = [
        Service.Add.self, Service.CopyMatching.self, Service.Update.self, Service.Delete.self,
        Service.KeychainStatusRequest.self, Service.Unlock.self, Service.Lock.self, Service.ChangePasscode.self,
        Service.UpdateSettings.self,
        Service.IssueDeveloperCertificate.self,
        Service.Authenticate.self, Service.InvalidateAuthentication.self, Service.AuthenticationCapabilitiesRequest.self,
        Service.CreateBackup.self, Service.RestoreBackup.self,
        Service.CreateEscrow.self, Service.UnlockWithEscrow.self, Service.RevokeEscrow.self,
        Service.EvaluateTrust.self, Service.DecodePKCS12.self, Service.EncodePKCS12.self,
        Service.SetTrustSettings.self, Service.RemoveTrustSettings.self, Service.CopyTrustSettings.self,
        Service.CreateEnclaveKey.self, Service.UseEnclaveKey.self,
        Service.CreateKeychain.self, Service.DeleteKeychain.self, Service.UnlockKeychain.self, Service.LockKeychain.self,
        Service.KeychainInfo.self, Service.SetKeychainSettings.self, Service.ChangeKeychainPassword.self,
        Service.SearchList.self, Service.DefaultKeychain.self,
        Service.InstallProfile.self, Service.RemoveProfile.self, Service.CopyProfiles.self,
        Service.ServeSecretService.self, Service.ImportKeyring.self,
    ]
}

/// The namespace of securityd's requests and their responses.
public enum Service {
    /// The longest passcode or password a request may carry.
    static let passcodeLimit = 4096
}
