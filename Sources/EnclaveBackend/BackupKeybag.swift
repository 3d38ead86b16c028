public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// A backup's keybag, inside the enclave: fresh class keys for the backup, the migratable
/// ones (ak, ck, dk) wrapped under the backup password, the ThisDeviceOnly ones (aku, cku,
/// dku) under the password entangled with the device key — so on another device they do
/// not open. WhenPasscodeSetThisDeviceOnly has no backup key: those items are never
/// backed up. Item keys are re-wrapped here, never handed out.
public final class BackupKeybag: Sendable {
    /// The classes a backup holds, with how their keys are wrapped.
    public static let classes: [ProtectionClass: BackupArchive.Wrapping] = [
        .whenUnlocked: .password, .afterFirstUnlock: .password, .always: .password,
        .whenUnlockedThisDeviceOnly: .passwordAndDevice, .afterFirstUnlockThisDeviceOnly: .passwordAndDevice,
        .alwaysThisDeviceOnly: .passwordAndDevice,
    ]

    /// The archive this keybag belongs to.
    public let archive: UUID
    /// The key of the archive's HMAC, derived from the password with the wrapping key.
    public let integrityKey: BackupIntegrityKey
    private let keys: [ProtectionClass: ClassKey]

    private init(archive: UUID, integrityKey: BackupIntegrityKey, keys: [ProtectionClass: ClassKey]) {
        self.archive = archive
        self.integrityKey = integrityKey
        self.keys = keys
    }

    /// A new backup keybag and its header: the archive with no records yet.
    public static func create(password: SecretBytes, kdf: PasscodeKDF, deviceKey: any DeviceKey, now: Date) throws -> (BackupKeybag, BackupArchive) {
        let uuid = UUID()
        let passwordKeys = try BackupPasswordKeys(password: password, kdf: kdf)
        var keys: [ProtectionClass: ClassKey] = [:]
        var wrapped: [ProtectionClass: (wrapping: BackupArchive.Wrapping, wrapped: Data)] = [:]
        for (protection, wrapping) in classes {
            let key = ClassKey.generate()
            keys[protection] = key
            let wrappingKey = try Self.wrappingKey(wrapping, archive: uuid, passwordKeys, deviceKey)
            wrapped[protection] = (wrapping, try wrappingKey.wrap(
                key, associatedData: BackupArchive.classKeyAssociatedData(archive: uuid, protection: protection, wrapping: wrapping)))
        }
        let header = BackupArchive(
            uuid: uuid, created: now, sourceDevice: try deviceIdentifier(deviceKey), kdf: kdf, classKeys: wrapped)
        return (BackupKeybag(archive: uuid, integrityKey: passwordKeys.integrityKey, keys: keys), header)
    }

    /// Opens the keybag of an archive's header with its password. A ThisDeviceOnly class
    /// key made on another device stays closed: ``isAvailable(_:)`` says which are open.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong password; `errSecDecode` for a header
    ///   that is not a backup's.
    public static func open(_ header: BackupArchive, password: SecretBytes, deviceKey: any DeviceKey) throws -> BackupKeybag {
        guard header.kdf.memoryBytes <= BackupArchive.maximumKDFMemory else {
            throw KeychainError.decode("the backup's password parameters are out of range")
        }
        let passwordKeys = try BackupPasswordKeys(password: password, kdf: header.kdf)
        var keys: [ProtectionClass: ClassKey] = [:]
        for (protection, entry) in header.classKeys {
            guard classes[protection] == entry.wrapping else { throw KeychainError.decode("the backup wraps a class key unexpectedly") }
            let wrappingKey = try Self.wrappingKey(entry.wrapping, archive: header.uuid, passwordKeys, deviceKey)
            let associatedData = BackupArchive.classKeyAssociatedData(archive: header.uuid, protection: protection, wrapping: entry.wrapping)
            do {
                keys[protection] = try wrappingKey.unwrap(entry.wrapped, associatedData: associatedData)
            } catch let error as KeychainError where error == .decode {
                // The password opens the migratable keys or nothing: which it is tells a wrong
                // password from a keybag made on another device.
                if entry.wrapping == .password {
                    throw KeychainError(status: OSStatusCode.authFailed, message: "the backup password is not correct")
                }
            }
        }
        guard keys.keys.contains(where: { classes[$0] == .password }) else {
            throw KeychainError.decode("the backup has no class keys")
        }
        return BackupKeybag(archive: header.uuid, integrityKey: passwordKeys.integrityKey, keys: keys)
    }

    /// This device's identifier, as archives record their source.
    public static func deviceIdentifier(_ deviceKey: any DeviceKey) throws -> Data {
        BackupArchive.deviceIdentifier(try deviceKey.authenticationCode(for: BackupArchive.deviceIdentifierLabel))
    }

    /// Whether this keybag holds the class key of `protection` (ThisDeviceOnly classes only
    /// on the device that made the backup).
    public func isAvailable(_ protection: ProtectionClass) -> Bool { keys[protection] != nil }

    /// The metadata key of the backup's class `protection`, for the daemon to seal or open
    /// the records' attributes with.
    public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        try key(protection).metadataKey()
    }

    /// A row's secret blob re-sealed for a backup record: opened with `unwrap` (the device's
    /// class key), sealed again under a fresh item key wrapped by the backup class key, with
    /// the same access control bound in.
    func export(
        _ blob: Data, protection: ProtectionClass, rowAssociatedData: Data, recordAssociatedData: Data,
        unwrap: (Data, Data, AccessControl?) throws -> ItemKey
    ) throws -> Data {
        let backupKey = try key(protection)
        var access: AccessControl?
        let secret = try SecretBlob.open(blob, associatedData: rowAssociatedData) { wrapped, associatedData, stored in
            access = stored
            return try unwrap(wrapped, associatedData, stored)
        }
        return try SecretBlob.seal(secret, associatedData: recordAssociatedData, access: access) { itemKey, associatedData, access in
            (try backupKey.wrap(itemKey, associatedData: Self.bound(associatedData, access)), access)
        }
    }

    /// A backup record's secret blob re-sealed for a row: the reverse of ``export``, with
    /// `wrap` wrapping the fresh item key under the device's class key.
    func `import`(
        _ blob: Data, protection: ProtectionClass, recordAssociatedData: Data, rowAssociatedData: Data,
        wrap: (ItemKey, Data, AccessControl?) throws -> Data
    ) throws -> Data {
        let backupKey = try key(protection)
        var access: AccessControl?
        let secret = try SecretBlob.open(blob, associatedData: recordAssociatedData) { wrapped, associatedData, stored in
            access = stored
            return try backupKey.unwrap(wrapped, associatedData: Self.bound(associatedData, stored))
        }
        return try SecretBlob.seal(secret, associatedData: rowAssociatedData, access: access) { itemKey, associatedData, access in
            (try wrap(itemKey, associatedData, access), access)
        }
    }

    /// The associated data of an item key's wrapping, with the access control bound in.
    static func bound(_ associatedData: Data, _ access: AccessControl?) -> Data {
        access.map { AccessBinding.associatedData(associatedData, access: $0) } ?? associatedData
    }

    private func key(_ protection: ProtectionClass) throws -> ClassKey {
        guard let key = keys[protection] else {
            throw KeychainError.decode("the backup holds no usable key for protection class \(protection.rawValue)")
        }
        return key
    }

    private static func wrappingKey(
        _ wrapping: BackupArchive.Wrapping, archive: UUID, _ passwordKeys: BackupPasswordKeys, _ deviceKey: any DeviceKey
    ) throws -> WrappingKey {
        switch wrapping {
        case .password: return passwordKeys.wrappingKey
        case .passwordAndDevice:
            var message = Data("trousseau backup device".utf8)
            withUnsafeBytes(of: archive.uuid) { message.append(contentsOf: $0) }
            message.append(passwordKeys.deviceEntanglement)
            return WrappingKey(deriving: try deviceKey.authenticationCode(for: message), info: "trousseau backup device wrapping key")
        }
    }
}
