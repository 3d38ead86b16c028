import EnclaveProtocol

extension EnclaveServer {
    /// Every request the enclave serves (each conforms to ``EnclaveHandled``), in the
    /// catalog's order. Listed rather than found by casting each request of the catalog: see
    /// `RequestTable.init(serving:)`. A request of the catalog missing here is unhandled
    /// (`unhandledRequests`, which a test expects empty).
    static let handledRequests: [any EnclaveHandled.Type] = [
        EnclaveCall.Status.self, EnclaveCall.Unlock.self, EnclaveCall.Lock.self, EnclaveCall.ChangePasscode.self,
        EnclaveCall.UpdateSettings.self, EnclaveCall.IndexKey.self, EnclaveCall.MetadataKey.self,
        EnclaveCall.WrapItemKey.self, EnclaveCall.UnwrapItemKey.self, EnclaveCall.Authenticate.self,
        EnclaveCall.InvalidateAuthentication.self, EnclaveCall.AuthenticationCapabilities.self,
        EnclaveCall.MigrateToTPM.self, EnclaveCall.BeginBackup.self, EnclaveCall.OpenBackup.self,
        EnclaveCall.BackupMetadataKey.self, EnclaveCall.ExportSecret.self, EnclaveCall.ImportSecret.self,
        EnclaveCall.EndBackup.self, EnclaveCall.CreateEscrow.self, EnclaveCall.UnlockWithEscrow.self,
        EnclaveCall.RevokeEscrow.self, EnclaveCall.CreateEnclaveKey.self, EnclaveCall.UseEnclaveKey.self,
        EnclaveCall.CreateFileKeychain.self, EnclaveCall.UnlockFileKeychain.self, EnclaveCall.LockFileKeychain.self,
        EnclaveCall.FileKeychainUnlocked.self, EnclaveCall.SetFileKeychainTimeout.self,
        EnclaveCall.ChangeFileKeychainPassword.self, EnclaveCall.CreateSyncIdentity.self,
        EnclaveCall.SignMembershipRecord.self, EnclaveCall.CreateSyncKey.self, EnclaveCall.SealSyncRecord.self,
        EnclaveCall.OpenSyncRecord.self, EnclaveCall.SealSyncKey.self, EnclaveCall.OpenSyncKey.self,
        EnclaveCall.SealSyncKeyShare.self, EnclaveCall.OpenSyncKeyShare.self, EnclaveCall.SyncCredential.self,
        EnclaveCall.CreateSyncRecoveryIdentity.self, EnclaveCall.ImportSyncRecoveryIdentity.self,
    ]
}
