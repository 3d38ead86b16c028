import FoundationEssentials
public import KeychainModel

/// A request securityd sends to the enclave, with its response type. Class keys never
/// cross the boundary: the daemon gets item keys wrapped or unwrapped, and the derived
/// metadata and index keys it caches.
///
/// Adding one: declare the type in `Requests/` (a `Codable` struct), give it an opcode in
/// ``EnclaveCatalog/catalog``, write its handler in `EnclaveBackend` (a conformance to
/// `EnclaveHandled`). Only securityd talks to the enclave (over a socketpair it made), so
/// there is no authorization to declare; what there is to declare is whether it may change
/// which keys are available.
public protocol EnclaveRequest: WireMessage {
    /// Whether it may lock, unlock or remove a class key: securityd drops the metadata keys
    /// it caches before and after sending it.
    static var mayChangeAvailableKeys: Bool { get }
}

/// The requests the enclave understands, each once, by opcode.
public enum EnclaveCatalog {
    public static let catalog = MessageCatalog([
        1: EnclaveCall.Status.self, 2: EnclaveCall.Unlock.self, 3: EnclaveCall.Lock.self, 4: EnclaveCall.ChangePasscode.self,
        5: EnclaveCall.UpdateSettings.self, 6: EnclaveCall.IndexKey.self, 7: EnclaveCall.MetadataKey.self, 8: EnclaveCall.WrapItemKey.self,
        9: EnclaveCall.UnwrapItemKey.self, 10: EnclaveCall.Authenticate.self, 11: EnclaveCall.InvalidateAuthentication.self, 12: EnclaveCall.AuthenticationCapabilities.self,
        13: EnclaveCall.MigrateToTPM.self,
        20: EnclaveCall.BeginBackup.self, 21: EnclaveCall.OpenBackup.self, 22: EnclaveCall.BackupMetadataKey.self, 23: EnclaveCall.ExportSecret.self,
        24: EnclaveCall.ImportSecret.self, 25: EnclaveCall.EndBackup.self, 30: EnclaveCall.CreateEscrow.self, 31: EnclaveCall.UnlockWithEscrow.self,
        32: EnclaveCall.RevokeEscrow.self, 40: EnclaveCall.CreateEnclaveKey.self, 41: EnclaveCall.UseEnclaveKey.self, 42: EnclaveCall.CreateFileKeychain.self,
        43: EnclaveCall.UnlockFileKeychain.self, 44: EnclaveCall.LockFileKeychain.self, 45: EnclaveCall.FileKeychainUnlocked.self, 46: EnclaveCall.SetFileKeychainTimeout.self,
        47: EnclaveCall.ChangeFileKeychainPassword.self, 50: EnclaveCall.CreateSyncIdentity.self, 51: EnclaveCall.SignMembershipRecord.self,
        52: EnclaveCall.CreateSyncKey.self, 53: EnclaveCall.SealSyncRecord.self, 54: EnclaveCall.OpenSyncRecord.self, 55: EnclaveCall.SealSyncKey.self,
        56: EnclaveCall.OpenSyncKey.self, 57: EnclaveCall.SealSyncKeyShare.self, 58: EnclaveCall.OpenSyncKeyShare.self, 59: EnclaveCall.SyncCredential.self,
        60: EnclaveCall.CreateSyncRecoveryIdentity.self, 61: EnclaveCall.ImportSyncRecoveryIdentity.self,
    ])

    /// Every request, by opcode.
    public static var requests: [any EnclaveRequest.Type] {
        catalog.requests.map { $0.type as! any EnclaveRequest.Type }  // the catalog lists only these
    }
}

/// The namespace of the enclave's requests and their responses.
public enum EnclaveCall {}

/// The frames between securityd and the enclave, inside `FrameIO`'s length prefix, as
/// ``WireProtocol`` lays them out (no presence: a request that needs the passcode has it
/// as a field).
public enum EnclaveWire: WireProtocol {
    /// 3: every message in ``WireEncoder``'s form and responses framed as securityd's
    /// (2 had a codec per request).
    public static let version: UInt8 = 3
    /// The largest frame either side accepts: a secret blob being re-sealed for a backup.
    public static let maximumFrameSize = 4 << 20
    public static var catalog: MessageCatalog { EnclaveCatalog.catalog }
    public static let carriesPresence = false
}
