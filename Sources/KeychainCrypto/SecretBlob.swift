import Crypto
public import FoundationEssentials
public import KeychainModel

/// The encrypted secret of one row, under a fresh per-item key that only the keybag
/// (the enclave) can unwrap:
/// `version(1) || wrappedKeyLength(u16) || wrappedKey || AES-256-GCM(nonce || ciphertext || tag)`.
/// The plaintext is a presence byte followed by the secret, so an item without data and
/// one with empty data stay distinct without a plaintext column saying which.
public enum SecretBlob {
    static let version: UInt8 = 1

    /// Seals `secret` (nil: the item has no data) for `identity`, asking `wrapKey` to wrap
    /// the fresh item key with the same associated data.
    public static func seal(
        _ secret: SecretBytes?, identity: RowIdentity,
        wrapKey: (ItemKey, Data) throws -> Data
    ) throws -> Data {
        let associatedData = identity.associatedData(for: .secret)
        let itemKey = ItemKey.generate()
        var plaintext = Data([secret == nil ? 0 : 1])
        secret?.withUnsafeBytes { plaintext.append(contentsOf: $0) }
        defer { plaintext.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        let sealed = try AES.GCM.seal(plaintext, using: itemKey.key, authenticating: associatedData)
        guard let combined = sealed.combined else { throw KeychainError.internalComponent }
        let wrapped = try wrapKey(itemKey, associatedData)
        guard wrapped.count <= Int(UInt16.max) else { throw KeychainError.internalComponent }
        var out = Data([version])
        out.appendInteger(UInt16(wrapped.count))
        out.append(wrapped)
        out.append(combined)
        return out
    }

    /// Opens a blob sealed for `identity`, asking `unwrapKey` to unwrap its item key.
    ///
    /// - Returns: the secret, or nil when the item was stored without data.
    /// - Throws: `errSecDecode` when the blob was altered, truncated, or belongs to another row.
    public static func open(
        _ blob: Data, identity: RowIdentity,
        unwrapKey: (Data, Data) throws -> ItemKey
    ) throws -> SecretBytes? {
        let associatedData = identity.associatedData(for: .secret)
        var reader = ByteReader(blob)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown secret blob version") }
        let wrappedLength = Int(try reader.integer(UInt16.self))
        let wrapped = Data(try reader.bytes(wrappedLength))
        let itemKey = try unwrapKey(wrapped, associatedData)
        var plaintext: Data
        do {
            plaintext = try AES.GCM.open(
                AES.GCM.SealedBox(combined: Data(reader.rest())), using: itemKey.key,
                authenticating: associatedData)
        } catch {
            throw KeychainError.decode("the item's secret failed authentication")
        }
        defer { plaintext.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        switch plaintext.first {
        case 0? where plaintext.count == 1: return nil
        case 1?: return SecretBytes(plaintext.dropFirst())
        default: throw KeychainError.decode("the item's secret has an unknown form")
        }
    }
}
