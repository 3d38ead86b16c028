import KeychainCrypto
import KeychainModel
import Keybag

/// The keys one store operation uses: each class's metadata key is asked of the keybag
/// once per operation and forgotten when the operation ends, so a lock (which removes
/// class A keys from the keybag) takes effect at the next operation.
final class OperationKeys {
    private let keybag: any Keybag
    private var metadataKeys: [ProtectionClass: MetadataKey] = [:]

    init(_ keybag: any Keybag) {
        self.keybag = keybag
    }

    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        if let key = metadataKeys[protection] { return key }
        let key = try keybag.metadataKey(for: protection)
        metadataKeys[protection] = key
        return key
    }
}
