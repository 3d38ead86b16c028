import EnclaveProtocol
import KeychainCrypto
import FoundationEssentials
import KeychainModel

// One handler per enclave request (EnclaveCatalog), each a call on the keybag.

extension EnclaveCall.Status: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveStatus {
        EnclaveStatus(keybag: server.keybag.status(), memoryLocked: server.memoryLocked, deviceKey: server.keybag.deviceKeySummary)
    }
}

extension EnclaveCall.Unlock: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.unlock(passcode: passcode)
        return NoResult()
    }
}

extension EnclaveCall.Lock: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        server.keybag.lock()
        return NoResult()
    }
}

extension EnclaveCall.ChangePasscode: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Bool {
        try server.keybag.changePasscode(old: old, new: new)
    }
}

extension EnclaveCall.MigrateToTPM: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveStatus {
        try server.keybag.migrateToTPM(tcti: tcti, passcode: passcode)
        return try EnclaveCall.Status().handle(in: server)
    }
}

extension EnclaveCall.UpdateSettings: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.updateSettings(autoLockSeconds: autoLockSeconds, eraseAfterFailures: eraseAfterFailures)
        return NoResult()
    }
}

extension EnclaveCall.IndexKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Key {
        EnclaveCall.Key(try server.keybag(for: keychain).indexKey().secretBytes)
    }
}

extension EnclaveCall.MetadataKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Key {
        EnclaveCall.Key(try server.keybag(for: keychain).metadataKey(for: protection).secretBytes)
    }
}

extension EnclaveCall.WrapItemKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Response {
        let (wrapped, bound) = try server.keybag(for: keychain).wrapItemKey(
            itemKey, for: protection, associatedData: associatedData, access: access, context: context)
        return Response(wrapped: wrapped, access: bound)
    }
}

extension EnclaveCall.UnwrapItemKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Key {
        let itemKey = try server.keybag(for: keychain).unwrapItemKey(
            wrapped, for: protection, associatedData: associatedData, access: access, context: context)
        return EnclaveCall.Key(itemKey.secretBytes)
    }
}

extension EnclaveCall.Authenticate: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.authenticate(request)
        return NoResult()
    }
}

extension EnclaveCall.InvalidateAuthentication: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        server.keybag.presence.invalidate(context: context)
        return NoResult()
    }
}

extension EnclaveCall.AuthenticationCapabilities: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> AuthenticationCapabilities {
        try server.keybag.capabilities()
    }
}

extension EnclaveCall.BeginBackup: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Response {
        let (session, header, integrityKey) = try server.keybag.beginBackup(password: password, passcode: passcode)
        return Response(session: session, integrityKey: integrityKey.secretBytes, header: header)
    }
}

extension EnclaveCall.OpenBackup: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Response {
        let (session, integrityKey, sameDevice, classes) = try server.keybag.openBackup(header, password: password)
        return Response(session: session, integrityKey: integrityKey.secretBytes, sameDevice: sameDevice, classes: Set(classes))
    }
}

extension EnclaveCall.BackupMetadataKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Key {
        EnclaveCall.Key(try server.keybag.backupMetadataKey(session: session, for: protection).secretBytes)
    }
}

extension EnclaveCall.ExportSecret: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Blob {
        EnclaveCall.Blob(try server.keybag.exportSecret(
            session: session, blob, protection: protection, rowAssociatedData: rowAssociatedData,
            recordAssociatedData: recordAssociatedData))
    }
}

extension EnclaveCall.ImportSecret: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.Blob {
        EnclaveCall.Blob(try server.keybag.importSecret(
            session: session, blob, protection: protection, recordAssociatedData: recordAssociatedData,
            rowAssociatedData: rowAssociatedData))
    }
}

extension EnclaveCall.EndBackup: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        server.keybag.endBackup(session: session)
        return NoResult()
    }
}

extension EnclaveCall.CreateEscrow: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Response {
        let (id, secret) = try server.keybag.createEscrow(passcode: passcode)
        return Response(id: id, secret: secret)
    }
}

extension EnclaveCall.UnlockWithEscrow: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.unlockWithEscrow(id: id, secret: secret)
        return NoResult()
    }
}

extension EnclaveCall.RevokeEscrow: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.revokeEscrow(id: id)
        return NoResult()
    }
}

extension EnclaveCall.CreateEnclaveKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.EnclaveKeyCreated {
        EnclaveCall.EnclaveKeyCreated(blob: try server.keybag.createEnclaveKey(protection: protection, access: access, context: context).data)
    }
}

extension EnclaveCall.UseEnclaveKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.EnclaveKeyOutput {
        EnclaveCall.EnclaveKeyOutput(try server.keybag.useEnclaveKey(EnclaveKeyBlob(data: blob), operation, context: context))
    }
}

// File keychains.

extension EnclaveCall.CreateFileKeychain: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> FileKeychainHeader {
        try server.keybag.createFileKeychain(password: password, autoLockSeconds: autoLockSeconds)
    }
}

extension EnclaveCall.UnlockFileKeychain: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        try server.keybag.unlockFileKeychain(header, password: password, autoLockSeconds: autoLockSeconds)
        return NoResult()
    }
}

extension EnclaveCall.LockFileKeychain: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        if let keychain { server.keybag.lockFileKeychain(keychain) } else { server.keybag.lockFileKeychains() }
        return NoResult()
    }
}

extension EnclaveCall.FileKeychainUnlocked: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> Bool {
        server.keybag.isFileKeychainUnlocked(keychain)
    }
}

extension EnclaveCall.SetFileKeychainTimeout: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> NoResult {
        server.keybag.setFileKeychainTimeout(keychain, autoLockSeconds: autoLockSeconds)
        return NoResult()
    }
}

extension EnclaveCall.ChangeFileKeychainPassword: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> FileKeychainHeader {
        try server.keybag.changeFileKeychainPassword(header, old: old, new: new)
    }
}

// Sync keys.

extension EnclaveCall.CreateSyncIdentity: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBlob {
        EnclaveCall.SyncBlob(blob: try server.keybag.createSyncIdentity(device: device).data)
    }
}

extension EnclaveCall.SignMembershipRecord: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBytes {
        EnclaveCall.SyncBytes(bytes: try server.keybag.signMembershipRecord(record, as: SyncIdentityBlob(data: identity)))
    }
}

extension EnclaveCall.CreateSyncKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBlob {
        EnclaveCall.SyncBlob(blob: try server.keybag.createSyncKey(role: role).data)
    }
}

extension EnclaveCall.SealSyncRecord: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBytes {
        EnclaveCall.SyncBytes(bytes: try server.keybag.sealSyncRecord(
            plaintext, context: context, parent: SyncKeyBlob(data: parent), identity: SyncIdentityBlob(data: identity)))
    }
}

extension EnclaveCall.OpenSyncRecord: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncPlaintext {
        EnclaveCall.SyncPlaintext(plaintext: try server.keybag.openSyncRecord(
            envelope, context: context, parent: SyncKeyBlob(data: parent), writer: writer, writerKey: writerKey))
    }
}

extension EnclaveCall.SealSyncKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBytes {
        EnclaveCall.SyncBytes(bytes: try server.keybag.sealSyncKey(
            SyncKeyBlob(data: key), context: context, parent: SyncKeyBlob(data: parent), identity: SyncIdentityBlob(data: identity)))
    }
}

extension EnclaveCall.OpenSyncKey: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBlob {
        EnclaveCall.SyncBlob(blob: try server.keybag.openSyncKey(
            envelope, context: context, parent: SyncKeyBlob(data: parent), writer: writer, writerKey: writerKey).data)
    }
}

extension EnclaveCall.SealSyncKeyShare: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBytes {
        EnclaveCall.SyncBytes(bytes: try server.keybag.sealSyncKeyShare(
            SyncKeyBlob(data: key), context: context, to: recipient, identity: SyncIdentityBlob(data: identity)))
    }
}

extension EnclaveCall.OpenSyncKeyShare: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBlob {
        EnclaveCall.SyncBlob(blob: try server.keybag.openSyncKeyShare(
            share, context: context, identity: SyncIdentityBlob(data: identity), sender: sender, senderKey: senderKey).data)
    }
}

extension EnclaveCall.CreateSyncRecoveryIdentity: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncRecoveryIdentity {
        let (key, identity) = try server.keybag.createSyncRecoveryIdentity()
        return EnclaveCall.SyncRecoveryIdentity(key: key, blob: identity.data)
    }
}

extension EnclaveCall.ImportSyncRecoveryIdentity: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncBlob {
        EnclaveCall.SyncBlob(blob: try server.keybag.importSyncRecoveryIdentity(key).data)
    }
}

extension EnclaveCall.SyncCredential: EnclaveHandled {
    func handle(in server: EnclaveServer) throws -> EnclaveCall.SyncPlaintext {
        EnclaveCall.SyncPlaintext(plaintext: try server.keybag.syncCredential(SyncIdentityBlob(data: identity)))
    }
}
