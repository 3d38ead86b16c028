public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
public import EnclaveProtocol

// File keychains: their keys stay in the enclave; securityd keeps their headers.

extension EnclaveClient {
    /// A new file keychain under `password`, unlocked: the header its file keeps.
    public func createFileKeychain(password: SecretBytes, autoLockSeconds: UInt32) throws -> FileKeychainHeader {
        try call(EnclaveCall.CreateFileKeychain(password: password, autoLockSeconds: autoLockSeconds))
    }

    /// Unlocks a file keychain with its password.
    public func unlockFileKeychain(_ header: FileKeychainHeader, password: SecretBytes, autoLockSeconds: UInt32) throws {
        try call(EnclaveCall.UnlockFileKeychain(header: header, password: password, autoLockSeconds: autoLockSeconds))
    }

    /// Locks a file keychain, or all of them (nil).
    public func lockFileKeychain(_ keychain: UUID?) throws {
        try call(EnclaveCall.LockFileKeychain(keychain))
    }

    /// Whether a file keychain is unlocked now. An answer "unlocked" is reused for as long
    /// as a metadata key is (``metadataKeyLifetime``), and forgotten as soon as any file
    /// keychain is locked, unlocked or changed: every operation asks, and a round trip to the
    /// enclave for each was a third of a file-keychain find.
    public func isFileKeychainUnlocked(_ keychain: UUID) throws -> Bool {
        try fileKeychainUnlocked(keychain) { try call(EnclaveCall.FileKeychainUnlocked(keychain)) }
    }

    /// Sets a file keychain's idle timeout (0: never).
    public func setFileKeychainTimeout(_ keychain: UUID, autoLockSeconds: UInt32) throws {
        try call(EnclaveCall.SetFileKeychainTimeout(keychain, autoLockSeconds: autoLockSeconds))
    }

    /// The header with the keychain's key under `new`.
    public func changeFileKeychainPassword(_ header: FileKeychainHeader, old: SecretBytes, new: SecretBytes) throws -> FileKeychainHeader {
        try call(EnclaveCall.ChangeFileKeychainPassword(header: header, old: old, new: new))
    }

    /// The keys of one file keychain, for its store.
    public func fileKeychainKeybag(_ keychain: UUID) -> any Keybag {
        FileKeychainKeybag(enclave: self, keychain: keychain)
    }
}

/// A file keychain's ``Keybag``: the key requests, naming the keychain. Its metadata keys
/// are cached as the login keychain's are (a second at most, dropped whenever a file
/// keychain is locked, unlocked or changed): the enclave decides the lock at every item key,
/// and at least once a second for attributes.
private struct FileKeychainKeybag: Keybag {
    let enclave: EnclaveClient
    let keychain: UUID

    func indexKey() throws -> IndexKey {
        try IndexKey(bytes: enclave.call(EnclaveCall.IndexKey(keychain: keychain)).bytes)
    }

    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        try enclave.metadataKey(for: protection, keychain: keychain)
    }

    func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?) {
        let response = try enclave.call(EnclaveCall.WrapItemKey(
            protection, itemKey, associatedData: associatedData, access: access, context: context, keychain: keychain))
        return (response.wrapped, response.access)
    }

    func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey {
        try ItemKey(bytes: enclave.call(EnclaveCall.UnwrapItemKey(
            protection, wrapped: wrapped, associatedData: associatedData, access: access, context: context, keychain: keychain)).bytes)
    }
}
