import KeychainProtocol

extension RequestDispatcher {
    /// Every request securityd serves (each conforms to ``ServedRequest``), in the catalog's
    /// order. Listed rather than found by casting each request of the catalog: see
    /// `RequestTable.init(serving:)`. A request of the catalog missing here is unserved, and
    /// securityd refuses to start (`unservedRequests`, which a test expects empty).
    static let servedRequests: [any ServedRequest.Type] = [
        Service.Add.self, Service.CopyMatching.self, Service.Update.self, Service.Delete.self,
        Service.KeychainStatusRequest.self, Service.Unlock.self, Service.Lock.self, Service.ChangePasscode.self,
        Service.UpdateSettings.self, Service.MigrateToTPM.self, Service.IssueDeveloperCertificate.self,
        Service.Authenticate.self, Service.InvalidateAuthentication.self,
        Service.AuthenticationCapabilitiesRequest.self, Service.CreateBackup.self, Service.RestoreBackup.self,
        Service.CreateEscrow.self, Service.UnlockWithEscrow.self, Service.RevokeEscrow.self, Service.EvaluateTrust.self,
        Service.DecodePKCS12.self, Service.EncodePKCS12.self, Service.SetTrustSettings.self,
        Service.RemoveTrustSettings.self, Service.CopyTrustSettings.self, Service.CreateEnclaveKey.self,
        Service.UseEnclaveKey.self, Service.CreateKeychain.self, Service.DeleteKeychain.self,
        Service.UnlockKeychain.self, Service.LockKeychain.self, Service.KeychainInfo.self,
        Service.SetKeychainSettings.self, Service.ChangeKeychainPassword.self, Service.SearchList.self,
        Service.DefaultKeychain.self, Service.InstallProfile.self, Service.RemoveProfile.self,
        Service.CopyProfiles.self, Service.ServeSecretService.self, Service.ImportKeyring.self, Service.EnableSync.self,
        Service.DisableSync.self, Service.SyncNow.self, Service.CopySyncStatus.self, Service.StartSyncPairing.self,
        Service.AwaitSyncPairing.self, Service.ApproveSyncPairing.self, Service.JoinSync.self,
        Service.CopySyncHistory.self, Service.RemoveSyncDevice.self, Service.CreateSyncRecoveryKey.self,
        Service.RecoverSync.self, Service.CopySecurityActivity.self,
    ]
}
