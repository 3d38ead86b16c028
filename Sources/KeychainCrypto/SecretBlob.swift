import Crypto
public import FoundationEssentials
public import KeychainModel

/// The encrypted secret of one row, under a fresh per-item key that only the keybag
/// (the enclave) can unwrap:
/// `version(1) || wrappedKeyLength(u16) || wrappedKey || AES-256-GCM(nonce || ciphertext || tag)`,
/// or, for an item with an access control,
/// `version(2) || accessLength(u16) || access || wrappedKeyLength(u16) || wrappedKey || sealed`:
/// the access control in clear for the daemon to read, authenticated by the enclave's wrap.
/// The plaintext is a presence byte followed by the secret, so an item without data and
/// one with empty data stay distinct without a plaintext column saying which.
public enum SecretBlob {
    static let version: UInt8 = 1
    static let accessControlledVersion: UInt8 = 2

    /// Seals `secret` (nil: the item has no data) for `identity`, asking `wrapKey` to wrap
    /// the fresh item key with the same associated data (and `access`, which it may bind:
    /// it returns the access control to store).
    public static func seal(
        _ secret: SecretBytes?, identity: RowIdentity, access: AccessControl? = nil,
        wrapKey: (ItemKey, Data, AccessControl?) throws -> (wrapped: Data, access: AccessControl?)
    ) throws -> Data {
        try seal(secret, associatedData: identity.associatedData(for: .secret), access: access, wrapKey: wrapKey)
    }

    /// Seals `secret` with `associatedData` (a row's, or a backup record's).
    public static func seal(
        _ secret: SecretBytes?, associatedData: Data, access: AccessControl? = nil,
        wrapKey: (ItemKey, Data, AccessControl?) throws -> (wrapped: Data, access: AccessControl?)
    ) throws -> Data {
        let itemKey = ItemKey.generate()
        var plaintext = Data([secret == nil ? 0 : 1])
        secret?.withUnsafeBytes { plaintext.append(contentsOf: $0) }
        defer { plaintext.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        let combined = try AESGCM.seal(plaintext, using: itemKey.key, authenticating: associatedData)
        let (wrapped, bound) = try wrapKey(itemKey, associatedData, access)
        guard wrapped.count <= Int(UInt16.max) else { throw KeychainError.internalComponent }
        var out = Data([bound == nil ? version : accessControlledVersion])
        if let bound {
            let encoded = bound.encoded
            out.appendInteger(UInt16(encoded.count))
            out.append(encoded)
        }
        out.appendInteger(UInt16(wrapped.count))
        out.append(wrapped)
        out.append(combined)
        return out
    }

    /// The access control stored in a blob, without opening it.
    ///
    /// - Throws: `errSecDecode` when the blob is malformed.
    public static func accessControl(of blob: Data) throws -> AccessControl? {
        var reader = ByteReader(blob)
        return try header(&reader)
    }

    /// Opens a blob sealed for `identity`, asking `unwrapKey` to unwrap its item key (with
    /// the associated data and the stored access control, which the enclave checks).
    ///
    /// - Returns: the secret, or nil when the item was stored without data.
    /// - Throws: `errSecDecode` when the blob was altered, truncated, or belongs to another row.
    public static func open(
        _ blob: Data, identity: RowIdentity,
        unwrapKey: (Data, Data, AccessControl?) throws -> ItemKey
    ) throws -> SecretBytes? {
        try open(blob, associatedData: identity.associatedData(for: .secret), unwrapKey: unwrapKey)
    }

    /// Opens a blob sealed with `associatedData`.
    public static func open(
        _ blob: Data, associatedData: Data,
        unwrapKey: (Data, Data, AccessControl?) throws -> ItemKey
    ) throws -> SecretBytes? {
        var reader = ByteReader(blob)
        let access = try header(&reader)
        let wrappedLength = Int(try reader.integer(UInt16.self))
        let wrapped = Data(try reader.bytes(wrappedLength))
        let itemKey = try unwrapKey(wrapped, associatedData, access)
        var plaintext: Data
        do {
            plaintext = try AESGCM.open(reader.rest(), using: itemKey.key, authenticating: associatedData)
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

    /// Reads the version and, in version 2, the access control.
    private static func header(_ reader: inout ByteReader) throws -> AccessControl? {
        switch try reader.byte() {
        case version: return nil
        case accessControlledVersion:
            let length = Int(try reader.integer(UInt16.self))
            do {
                return try AccessControl(encoded: Data(try reader.bytes(length)))
            } catch {
                throw KeychainError.decode("the item's access control is malformed")
            }
        default: throw KeychainError.decode("unknown secret blob version")
        }
    }
}
