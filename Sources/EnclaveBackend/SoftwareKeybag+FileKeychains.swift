public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
import EnclaveProtocol

/// An unlocked file keychain's key, and when it locks by itself.
struct FileKeychainKeys: Sendable {
    var key: ClassKey
    var autoLockSeconds: UInt32
    var lastActivity: Double
}

/// File keychains: each its own key under its own password (``FileKeychainHeader``), held
/// here while the keychain is unlocked. Their headers live in the keychain files, which
/// securityd reads and writes; the enclave never touches them, so a file keychain is
/// unlocked in the enclave only by a password that opens the header it is given.
extension SoftwareKeybag {
    /// A new file keychain's header under `password`; the keychain is unlocked.
    public func createFileKeychain(password: SecretBytes, autoLockSeconds: UInt32) throws -> FileKeychainHeader {
        if password.isEmpty { throw KeychainError.param("an empty password cannot protect a keychain file") }
        let (header, key) = try FileKeychainHeader.create(password: password, kdf: try fileKeychainKDF())
        let now = configuration.clock()
        fileKeychains.withLock { $0[header.uuid] = FileKeychainKeys(key: key, autoLockSeconds: autoLockSeconds, lastActivity: now) }
        return header
    }

    /// Unlocks the keychain of `header` with its password. A wrong password counts towards
    /// that keychain's throttle, kept on this machine by its identity.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong password or while the throttle's delay runs.
    public func unlockFileKeychain(_ header: FileKeychainHeader, password: SecretBytes, autoLockSeconds: UInt32) throws {
        let key = try throttled(header.uuid) { try header.open(password: password) }
        let now = configuration.clock()
        fileKeychains.withLock { $0[header.uuid] = FileKeychainKeys(key: key, autoLockSeconds: autoLockSeconds, lastActivity: now) }
    }

    /// Locks a file keychain: its key is dropped (and zeroed).
    public func lockFileKeychain(_ uuid: UUID) {
        _ = fileKeychains.withLock { $0.removeValue(forKey: uuid) }
    }

    /// Locks every file keychain.
    public func lockFileKeychains() {
        fileKeychains.withLock { $0.removeAll() }
    }

    /// Whether the keychain is unlocked now (applying its timeout first).
    public func isFileKeychainUnlocked(_ uuid: UUID) -> Bool {
        (try? fileKeychainKey(uuid, touching: false)) != nil
    }

    /// Changes the idle time after which an unlocked file keychain locks (0: never).
    public func setFileKeychainTimeout(_ uuid: UUID, autoLockSeconds: UInt32) {
        fileKeychains.withLock { $0[uuid]?.autoLockSeconds = autoLockSeconds }
    }

    /// The header with the same key under `new`, once `old` opens it (throttled as an unlock).
    public func changeFileKeychainPassword(_ header: FileKeychainHeader, old: SecretBytes, new: SecretBytes) throws -> FileKeychainHeader {
        if new.isEmpty { throw KeychainError.param("an empty password cannot protect a keychain file") }
        let key = try throttled(header.uuid) { try header.open(password: old) }
        return try header.rewrapped(key, password: new, kdf: try fileKeychainKDF())
    }

    /// A file keychain's password parameters: as slow as a backup's (the file may travel and
    /// be guessed offline), with memory held at the backup minimum (64 MiB) and the time
    /// made up by scrypt's p, so that an unlock fits any machine that can run the daemon.
    private func fileKeychainKDF() throws -> PasscodeKDF {
        try PasscodeKDF.calibratedParallelism(
            target: configuration.backupKDFTarget, logN: configuration.minimumBackupLogN, salt: Self.randomBytes(32))
    }

    /// The keychain key while the keychain is unlocked.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when it is locked (macOS would ask for the
    ///   password; there is nobody to ask here).
    func fileKeychainKey(_ uuid: UUID, touching: Bool = true) throws -> ClassKey {
        let now = configuration.clock()
        return try fileKeychains.withLock { open in
            if let keys = open[uuid], keys.autoLockSeconds > 0, now - keys.lastActivity >= Double(keys.autoLockSeconds) {
                open[uuid] = nil
            }
            guard let keys = open[uuid] else {
                throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the keychain is locked")
            }
            if touching { open[uuid]?.lastActivity = now }
            return keys.key
        }
    }

    /// Runs `attempt` under the keychain's failed-unlock throttle: counted before, cleared
    /// after a success, so that killing the enclave mid-check gives no free guess.
    private func throttled<T>(_ uuid: UUID, _ attempt: () throws -> T) throws -> T {
        let name = "unlock.throttle-" + uuid.uuidString.lowercased()
        _ = try UnlockThrottle.countAttempt(in: directory, fileName: name, at: configuration.clock())
        let result = try attempt()
        try UnlockThrottle.clear(in: directory, fileName: name)
        return result
    }
}

/// A file keychain's keys as a ``Keybag``, for the enclave's handlers: every class is the
/// keychain key, available while it is unlocked. Access controls are the login keychain's.
struct FileKeychainKeybag: Keybag {
    let keybag: SoftwareKeybag
    let uuid: UUID

    func indexKey() throws -> IndexKey { try keybag.fileKeychainKey(uuid).indexKey() }

    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey { try keybag.fileKeychainKey(uuid).metadataKey() }

    func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?) {
        guard access == nil else { throw Self.accessControlRefused }
        return (try keybag.fileKeychainKey(uuid).wrap(itemKey, associatedData: associatedData), nil)
    }

    func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey {
        guard access == nil else { throw Self.accessControlRefused }
        return try keybag.fileKeychainKey(uuid).unwrap(wrapped, associatedData: associatedData)
    }

    static let accessControlRefused = KeychainError(
        status: OSStatusCode.param, message: "access controls (kSecAttrAccessControl) are kept by the login keychain, not by file keychains")
}
