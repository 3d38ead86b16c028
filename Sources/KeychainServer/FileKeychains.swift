import Enclave
import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainStore
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The file keychains this securityd serves, by absolute path: their headers and settings
/// (read from the files), and a store for each one used while unlocked. Their keys are the
/// enclave's. A path is trusted only as far as the file it names is a keychain of ours:
/// securityd creates new files (never replacing one) and reads or deletes only files that
/// carry a keychain header.
final class FileKeychains: Sendable {
    private struct Open: Sendable {
        var header: FileKeychainHeader
        var settings: KeychainSettings
        /// The file it was read from (device, inode): another file at the path is read afresh.
        var identity: FileIdentity
        var store: KeychainStore?
    }

    private struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    private let enclave: EnclaveClient
    /// Where bare names resolve (`KEYCHAIN_HOME/keychains`), made on first use.
    private let directory: String
    private let open = BlockingMutex<[String: Open]>([:])

    /// The open file keychains' committed writes, summed (``KeychainStore/changeCount``).
    var changeCount: UInt64 { open.withLock { $0.values.reduce(0) { $0 &+ ($1.store?.changeCount ?? 0) } } }

    init(enclave: EnclaveClient, directory: String) {
        self.enclave = enclave
        self.directory = directory
    }

    /// Creates a keychain at `path` under `password`, unlocked.
    func create(_ path: String, password: SecretBytes, settings: KeychainSettings) throws {
        try Self.check(path)
        if path.hasPrefix(directory + "/") { try KeychainStore.prepareHome(directory) }
        let header = try enclave.createFileKeychain(password: password, autoLockSeconds: settings.autoLockSeconds)
        do {
            try FileKeychainFile.create(at: path, header: header, settings: settings, keybag: enclave.fileKeychainKeybag(header.uuid))
        } catch {
            try? enclave.lockFileKeychain(header.uuid)
            throw error
        }
    }

    /// Locks the keychain at `path`, forgets it and removes its file.
    func delete(_ path: String) throws {
        let entry = try opened(path)
        open.withLock { $0[path] = nil }
        try? entry.store?.close()
        try enclave.lockFileKeychain(entry.header.uuid)
        try FileKeychainFile.delete(at: path)
    }

    /// Unlocks the keychain at `path` with its password.
    func unlock(_ path: String, password: SecretBytes) throws {
        let entry = try opened(path)
        try enclave.unlockFileKeychain(entry.header, password: password, autoLockSeconds: entry.settings.autoLockSeconds)
    }

    /// Locks the keychain at `path`, or every file keychain (nil).
    func lock(_ path: String?) throws {
        guard let path else { return try enclave.lockFileKeychain(nil) }
        try enclave.lockFileKeychain(try opened(path).header.uuid)
    }

    /// Locks every keychain whose settings say lock on sleep: the machine is about to sleep.
    /// The paths of those it locked.
    func lockForSleep() -> [String] {
        let sleepers = open.withLock { $0.filter { $0.value.settings.lockOnSleep }.map { ($0.key, $0.value.header.uuid) } }
        return sleepers.compactMap { path, uuid in (try? enclave.lockFileKeychain(uuid)) == nil ? nil : path }
    }

    /// The keychain's settings and whether it is unlocked.
    func info(_ path: String) throws -> (settings: KeychainSettings, unlocked: Bool) {
        let entry = try opened(path)
        return (entry.settings, try enclave.isFileKeychainUnlocked(entry.header.uuid))
    }

    /// Records new settings in the file and applies the timeout. The keychain must be unlocked.
    func setSettings(_ path: String, _ settings: KeychainSettings) throws {
        let (entry, store) = try storeAndEntry(path)
        try FileKeychainFile.update(store, settings: settings)
        try enclave.setFileKeychainTimeout(entry.header.uuid, autoLockSeconds: settings.autoLockSeconds)
        open.withLock { $0[path]?.settings = settings }
    }

    /// Puts the keychain's key under `new`, once `old` opens it. No item is re-encrypted.
    func changePassword(_ path: String, old: SecretBytes, new: SecretBytes) throws {
        let entry = try opened(path)
        let header = try enclave.changeFileKeychainPassword(entry.header, old: old, new: new)
        // Writing the file needs the keychain's store, which needs it unlocked: the old password just proved itself.
        try enclave.unlockFileKeychain(header, password: new, autoLockSeconds: entry.settings.autoLockSeconds)
        let (_, store) = try storeAndEntry(path)
        try FileKeychainFile.update(store, header: header)
        open.withLock { $0[path]?.header = header }
    }

    /// The item store of the keychain at `path`.
    ///
    /// - Throws: `errSecInteractionNotAllowed` while it is locked; `errSecNoSuchKeychain`
    ///   or `errSecInvalidKeychain` for a path that is not a keychain.
    func store(_ path: String) throws -> KeychainStore {
        try storeAndEntry(path).1
    }

    private func storeAndEntry(_ path: String) throws -> (Open, KeychainStore) {
        let entry = try opened(path)
        if let store = entry.store {
            // The store's index key was read when it opened; the lock is checked on every operation's keys.
            guard try enclave.isFileKeychainUnlocked(entry.header.uuid) else { throw Self.locked(path) }
            return (entry, store)
        }
        let store: KeychainStore
        do {
            store = try FileKeychainFile.openStore(at: path, keybag: enclave.fileKeychainKeybag(entry.header.uuid))
        } catch let error as KeychainError where error.status == OSStatusCode.interactionNotAllowed {
            throw Self.locked(path)
        }
        open.withLock { $0[path]?.store = store }
        return (entry, store)
    }

    /// The keychain at `path`, read from its file when first named or when the file changed.
    private func opened(_ path: String) throws -> Open {
        try Self.check(path)
        var status = stat()
        guard stat(path, &status) == 0 else {
            open.withLock { $0[path] = nil }
            throw KeychainError(status: OSStatusCode.noSuchKeychain, message: "no keychain at \(path)")
        }
        let identity = FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        if let entry = open.withLock({ $0[path] }), entry.identity == identity { return entry }
        let (header, settings) = try FileKeychainFile.read(at: path)
        let entry = Open(header: header, settings: settings, identity: identity, store: nil)
        open.withLock { $0[path] = entry }
        return entry
    }

    /// A keychain path is absolute and bounded.
    private static func check(_ path: String) throws {
        guard path.hasPrefix("/"), path.utf8.count < 4096, !path.contains("\0") else {
            throw KeychainError(status: OSStatusCode.noSuchKeychain, message: "a keychain is named by an absolute path")
        }
    }

    private static func locked(_ path: String) -> KeychainError {
        KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the keychain \(path) is locked")
    }
}
