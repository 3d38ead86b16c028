import Crypto
@_exported public import KeychainBackupFormat
public import FoundationEssentials

// The backup archive's format is a module of its own (`KeychainBackupFormat`), so that
// `security backup inspect` reads and verifies an archive without linking the blobs'
// AES-GCM (libsodium: preloading it into `security find-generic-password -w` cost
// 0.2 ms a call, 7.45 → 7.65 ms p50 over 500 alternated runs). What needs
// the blobs' keys and row identities is here; the rest is re-exported.

extension BackupArchive.Record {
    /// The associated data of the record's blob `part`: the archive and the record's
    /// identity, so a blob cannot move between records, parts or archives.
    public func associatedData(for part: RowIdentity.Part, archive: UUID) -> Data {
        var out = Data("trousseau backup record".utf8)
        withUnsafeBytes(of: archive.uuid) { out.append(contentsOf: $0) }
        let identity = RowIdentity(
            itemClass: itemClass, uuid: uuid, accessGroup: accessGroup, protection: protection,
            synchronizable: synchronizable, tombstone: tombstone, primaryKeyToken: Data())
        out.append(identity.associatedData(for: part))
        return out
    }
}

extension BackupPasswordKeys {
    /// The key that wraps the backup's migratable class keys.
    public var wrappingKey: WrappingKey {
        WrappingKey(key: HKDF<SHA256>.deriveKey(inputKeyMaterial: stretched, info: Data("trousseau backup wrapping key".utf8), outputByteCount: 32))
    }
}
