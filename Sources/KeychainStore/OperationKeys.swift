import KeychainCrypto
import KeychainModel
import EnclaveProtocol

/// The keys one store operation uses: each class's metadata key is asked of the keybag
/// once per operation and forgotten when the operation ends, so a lock (which removes
/// class A keys from the keybag) takes effect at the next operation.
final class OperationKeys {
    private let source: (ProtectionClass) throws -> MetadataKey
    private var metadataKeys: [ProtectionClass: MetadataKey] = [:]

    init(_ keybag: any Keybag) {
        source = keybag.metadataKey(for:)
    }

    /// The metadata keys of a backup's classes, for the length of a backup or restore.
    init(_ backup: any BackupKeys) {
        source = backup.metadataKey(for:)
    }

    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        if let key = metadataKeys[protection] { return key }
        let key = try source(protection)
        metadataKeys[protection] = key
        return key
    }
}
