public import FoundationEssentials
public import KeychainModel

/// A request a client sends to securityd, with who may send it.
///
/// Adding a request: declare a type conforming to this protocol (its fields, its
/// ``WireMessage/Response`` and its ``authorization``) in `Requests/` — a `Codable` struct,
/// whose codec is ``WireEncoder``'s — give it an opcode in ``ServiceCatalog/catalog``, and
/// write its handler in `KeychainServer` (a conformance to `ServedRequest`). A request
/// without an ``authorization`` does not compile; one without a handler is refused when
/// the daemon starts (and by a test).
public protocol ServiceRequest: WireMessage {
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

/// The requests securityd understands, each once, by opcode. The daemon serves exactly
/// these; the fuzz targets and the protocol tests walk them.
public enum ServiceCatalog {
    public static let catalog = MessageCatalog([
        1: Service.Add.self, 2: Service.CopyMatching.self, 3: Service.Update.self, 4: Service.Delete.self,
        10: Service.KeychainStatusRequest.self, 11: Service.Unlock.self, 12: Service.Lock.self, 13: Service.ChangePasscode.self,
        14: Service.UpdateSettings.self, 15: Service.MigrateToTPM.self, 20: Service.IssueDeveloperCertificate.self, 40: Service.Authenticate.self, 41: Service.InvalidateAuthentication.self,
        42: Service.AuthenticationCapabilitiesRequest.self, 50: Service.CreateBackup.self, 51: Service.RestoreBackup.self, 60: Service.CreateEscrow.self,
        61: Service.UnlockWithEscrow.self, 62: Service.RevokeEscrow.self, 70: Service.EvaluateTrust.self, 71: Service.DecodePKCS12.self,
        72: Service.EncodePKCS12.self, 73: Service.SetTrustSettings.self, 74: Service.RemoveTrustSettings.self, 75: Service.CopyTrustSettings.self,
        76: Service.CreateEnclaveKey.self, 77: Service.UseEnclaveKey.self, 78: Service.CreateKeychain.self, 79: Service.DeleteKeychain.self,
        80: Service.UnlockKeychain.self, 81: Service.LockKeychain.self, 82: Service.KeychainInfo.self, 83: Service.SetKeychainSettings.self,
        84: Service.ChangeKeychainPassword.self, 85: Service.SearchList.self, 86: Service.DefaultKeychain.self, 87: Service.InstallProfile.self,
        88: Service.RemoveProfile.self, 89: Service.CopyProfiles.self, 90: Service.ServeSecretService.self, 91: Service.ImportKeyring.self,
        92: Service.EnableSync.self, 93: Service.DisableSync.self, 94: Service.SyncNow.self, 95: Service.CopySyncStatus.self,
        96: Service.StartSyncPairing.self, 97: Service.AwaitSyncPairing.self, 98: Service.ApproveSyncPairing.self, 99: Service.JoinSync.self, 100: Service.CopySyncHistory.self,
        101: Service.RemoveSyncDevice.self, 102: Service.CreateSyncRecoveryKey.self, 103: Service.RecoverSync.self,
        104: Service.CopySecurityActivity.self,
    ])

    /// Every request, by opcode.
    public static var requests: [any ServiceRequest.Type] {
        catalog.requests.map { $0.type as! any ServiceRequest.Type }  // the catalog lists only these
    }
}

/// The namespace of securityd's requests and their responses.
public enum Service {}
