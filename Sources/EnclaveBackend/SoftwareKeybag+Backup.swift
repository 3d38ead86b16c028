public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// An open backup keybag and what it may be used for. A session made to back up only
/// exports (and needs the passcode to be made); one opened from an archive only imports —
/// otherwise anyone who writes an archive, and so knows its keys, could export into it.
struct BackupSession: Sendable {
    enum Purpose: Sendable { case export, `import` }
    let keybag: BackupKeybag
    let purpose: Purpose
}

extension SoftwareKeybag {
    /// The most backup sessions open at once; a new one beyond it ends another.
    static let maximumBackupSessions = 4

    /// Starts a backup: a new backup keybag under `password`. With a keychain passcode set,
    /// it must be given (and is checked and throttled as an unlock).
    ///
    /// - Returns: the session id, the archive's header and the key of its HMAC.
    /// - Throws: `errSecAuthFailed` for a wrong or missing passcode, `errSecParam` for an
    ///   empty password.
    public func beginBackup(password: SecretBytes, passcode: SecretBytes?) throws -> (session: Data, header: BackupArchive, integrityKey: BackupIntegrityKey) {
        guard !password.isEmpty else { throw KeychainError.param("a backup needs a password") }
        try requirePasscode(passcode, for: "a backup")
        let kdf = try PasscodeKDF.calibrated(
            target: configuration.backupKDFTarget, minimumLogN: configuration.minimumBackupLogN, salt: Self.randomBytes(32))
        let (keybag, header) = try BackupKeybag.create(password: password, kdf: kdf, deviceKey: deviceKey, now: Date())
        return (register(BackupSession(keybag: keybag, purpose: .export)), header, keybag.integrityKey)
    }

    /// Opens the backup keybag of an archive's header for a restore.
    ///
    /// - Returns: the session id, the key of the archive's HMAC (which the caller checks
    ///   before importing anything), whether this device made the backup, and the classes
    ///   whose keys opened.
    /// - Throws: `errSecAuthFailed` for a wrong password.
    public func openBackup(
        _ header: BackupArchive, password: SecretBytes
    ) throws -> (session: Data, integrityKey: BackupIntegrityKey, sameDevice: Bool, classes: [ProtectionClass]) {
        let keybag = try BackupKeybag.open(header, password: password, deviceKey: deviceKey)
        let sameDevice = try BackupKeybag.deviceIdentifier(deviceKey) == header.sourceDevice
        let classes = ProtectionClass.allCases.filter(keybag.isAvailable)
        return (register(BackupSession(keybag: keybag, purpose: .import)), keybag.integrityKey, sameDevice, classes)
    }

    /// The metadata key of a backup class.
    public func backupMetadataKey(session: Data, for protection: ProtectionClass) throws -> MetadataKey {
        try backupSession(session, .export, .import).keybag.metadataKey(for: protection)
    }

    /// A row's secret blob re-sealed for a backup record. The item key never leaves the
    /// enclave; access controls are carried over without asking for the user's presence
    /// (the backup needed the passcode), but an application password cannot be: those
    /// items are refused with `errSecAuthNeeded` and left out.
    public func exportSecret(
        session: Data, _ blob: Data, protection: ProtectionClass, rowAssociatedData: Data, recordAssociatedData: Data
    ) throws -> Data {
        let backup = try backupSession(session, .export)
        let classKey = try classKey(protection)
        return try backup.keybag.export(
            blob, protection: protection, rowAssociatedData: rowAssociatedData, recordAssociatedData: recordAssociatedData
        ) { wrapped, associatedData, access in
            if access?.requiresApplicationPassword == true {
                throw KeychainError(status: OSStatusCode.authNeeded, message: "an item with an application password is not backed up")
            }
            return try classKey.unwrap(wrapped, associatedData: BackupKeybag.bound(associatedData, access))
        }
    }

    /// A backup record's secret blob re-sealed for a row of this keychain, under the
    /// device's class key (available in the current lock state) with its access control.
    public func importSecret(
        session: Data, _ blob: Data, protection: ProtectionClass, recordAssociatedData: Data, rowAssociatedData: Data
    ) throws -> Data {
        let backup = try backupSession(session, .import)
        let classKey = try classKey(protection)
        return try backup.keybag.import(
            blob, protection: protection, recordAssociatedData: recordAssociatedData, rowAssociatedData: rowAssociatedData
        ) { itemKey, associatedData, access in
            try classKey.wrap(itemKey, associatedData: BackupKeybag.bound(associatedData, access))
        }
    }

    /// Ends a backup session; its keys are dropped (and zeroed).
    public func endBackup(session: Data) {
        _ = backups.withLock { $0.removeValue(forKey: session) }
    }

    /// With a keychain passcode set, checks `passcode` (throttled as an unlock) before
    /// `operation`, which hands keys out of the device's reach.
    func requirePasscode(_ passcode: SecretBytes?, for operation: String) throws {
        guard status().hasPasscode else { return }
        guard let passcode else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "\(operation) needs the keychain password")
        }
        try unlock(passcode: passcode)
    }

    private func register(_ session: BackupSession) -> Data {
        let id = Self.randomBytes(16)
        backups.withLock { sessions in
            if sessions.count >= Self.maximumBackupSessions, let any = sessions.keys.first {
                sessions[any] = nil
            }
            sessions[id] = session
        }
        return id
    }

    private func backupSession(_ id: Data, _ purposes: BackupSession.Purpose...) throws -> BackupSession {
        guard let session = backups.withLock({ $0[id] }), purposes.contains(session.purpose) else {
            throw KeychainError.param("no such backup session")
        }
        return session
    }
}
