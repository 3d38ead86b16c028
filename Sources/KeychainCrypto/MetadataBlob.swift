import Crypto
public import FoundationEssentials
public import KeychainModel

/// The encrypted attributes of one row: `version(1) || AES-256-GCM(nonce || ciphertext || tag)`
/// under the class's metadata key, with the row identity as associated data.
public enum MetadataBlob {
    static let version: UInt8 = 1

    /// Seals `attributes` for the row `identity`.
    public static func seal(_ attributes: [String: KeychainValue], key: MetadataKey, identity: RowIdentity) throws -> Data {
        try seal(attributes, key: key, associatedData: identity.associatedData(for: .metadata))
    }

    /// Seals `attributes` with `associatedData` (a row's, or a backup record's).
    public static func seal(_ attributes: [String: KeychainValue], key: MetadataKey, associatedData: Data) throws -> Data {
        let combined = try AESGCM.seal(AttributeCodec.encode(attributes), using: key.key, authenticating: associatedData)
        return Data([version]) + combined
    }

    /// Opens a blob sealed for `identity`.
    ///
    /// - Throws: `errSecDecode` when the blob was altered, truncated, or belongs to another row.
    public static func open(_ blob: Data, key: MetadataKey, identity: RowIdentity) throws -> [String: KeychainValue] {
        try open(blob, key: key, associatedData: identity.associatedData(for: .metadata))
    }

    /// Opens a blob sealed with `associatedData`.
    public static func open(_ blob: Data, key: MetadataKey, associatedData: Data) throws -> [String: KeychainValue] {
        guard blob.first == version else { throw KeychainError.decode("unknown metadata blob version") }
        let plaintext: Data
        do {
            plaintext = try AESGCM.open(blob.dropFirst(), using: key.key, authenticating: associatedData)
        } catch {
            throw KeychainError.decode("the item's attributes failed authentication")
        }
        return try AttributeCodec.decode(plaintext)
    }
}
