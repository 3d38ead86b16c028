import Enclave
import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainStore
import KeychainSystem

/// Backups and restores: the store re-seals rows as records, the enclave re-wraps their
/// keys under a backup keybag, and this writes or reads the one authenticated file.
struct BackupService {
    let store: KeychainStore
    let enclave: EnclaveClient

    /// The largest archive a restore reads.
    static let maximumArchiveSize = 1 << 30

    /// Writes a backup of every item (but WhenPasscodeSetThisDeviceOnly ones) to `path`,
    /// replacing it atomically; the file is private to the user (0600).
    func create(at path: String, password: SecretBytes, passcode: SecretBytes?) throws -> BackupReport {
        try Self.requireAbsolute(path)
        let (session, header, integrityKey) = try enclave.beginBackup(password: password, passcode: passcode)
        defer { session.end() }
        var archive = header
        let report: BackupReport
        (archive.records, report) = try store.backupRecords(archive: header.uuid, keys: session)
        try PrivateFile.replace(path, with: archive.encoded(integrityKey: integrityKey))
        return report
    }

    /// Restores the backup at `path`. The whole archive is checked first — its structure,
    /// the password (the enclave opens the backup keybag with it), then the MAC — so a wrong
    /// password or an altered byte writes nothing; then every record is decrypted and
    /// written in one transaction.
    func restore(from path: String, password: SecretBytes) throws -> (RestoreReport, sameDevice: Bool) {
        try Self.requireAbsolute(path)
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw KeychainError(status: OSStatusCode.io, message: "cannot read the backup \(path)")
        }
        guard data.count <= Self.maximumArchiveSize else { throw KeychainError.decode("the backup is too large") }
        let archive = try BackupArchive(decoding: data)
        guard archive.kdf.memoryBytes <= BackupArchive.maximumKDFMemory else {
            throw KeychainError.decode("the backup's password parameters are out of range")
        }
        var header = archive
        header.records = []
        let (session, integrityKey, sameDevice, classes) = try enclave.openBackup(header, password: password)
        defer { session.end() }
        try BackupArchive.verify(data, key: integrityKey)
        let report = try store.restore(
            archive.records, archive: archive.uuid, keys: session, available: classes, sameDevice: sameDevice)
        return (report, sameDevice)
    }

    private static func requireAbsolute(_ path: String) throws {
        guard path.hasPrefix("/") else { throw KeychainError.param("the backup's path must be absolute") }
    }
}
