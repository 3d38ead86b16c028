import Crypto
public import FoundationEssentials
public import KeychainModel

/// A 256-bit AES-GCM key that encrypts the metadata blobs of one protection class.
/// Zeroed when dropped (swift-crypto's `SymmetricKey` storage).
public struct MetadataKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }
}

/// The key of the keyed tokens (blind index) over searchable attributes.
public struct IndexKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }
}

/// A fresh per-item key that encrypts one item's secret; it is stored only wrapped.
public struct ItemKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }

    /// A new random 256-bit key.
    public static func generate() -> ItemKey {
        ItemKey(key: SymmetricKey(size: .bits256))
    }
}

/// A root secret from which a keybag derives its class, metadata and index keys.
/// Zeroed when dropped.
public struct RootKey: Sendable {
    let key: SymmetricKey

    /// The size of a root key in bytes.
    public static let byteCount = 32

    /// A new random root key.
    public static func generate() -> RootKey {
        RootKey(key: SymmetricKey(size: .bits256))
    }

    /// Reads a root key from its stored bytes.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == Self.byteCount else { throw KeychainError.decode("a root key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    init(key: SymmetricKey) { self.key = key }

    /// The bytes to store, for example in a 0600 file.
    public var secretBytes: SecretBytes {
        key.withUnsafeBytes { SecretBytes($0) }
    }

    /// Derives an independent key for `purpose` with HKDF-SHA256.
    func derive(_ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("trousseau \(purpose)".utf8), outputByteCount: 32)
    }

    /// The class key of `protection`: it wraps the per-item keys of that class.
    public func classKey(for protection: ProtectionClass) -> ClassKey {
        ClassKey(key: derive("class key \(protection.rawValue)"))
    }

    /// The metadata key of `protection`.
    public func metadataKey(for protection: ProtectionClass) -> MetadataKey {
        MetadataKey(key: derive("metadata key \(protection.rawValue)"))
    }

    /// The index key, protected like class Always.
    public func indexKey() -> IndexKey {
        IndexKey(key: derive("index key"))
    }
}

/// The key of one protection class; it wraps and unwraps per-item keys.
public struct ClassKey: Sendable {
    let key: SymmetricKey

    /// Wraps `itemKey` with AES-256-GCM, authenticating `associatedData` (the row identity).
    public func wrap(_ itemKey: ItemKey, associatedData: Data) throws -> Data {
        // Sealed straight from the key's own storage: no unzeroed copy of the item key.
        let sealed = try itemKey.key.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: key, authenticating: associatedData)
        }
        guard let combined = sealed.combined else { throw KeychainError.internalComponent }
        return combined
    }

    /// Unwraps what ``wrap(_:associatedData:)`` produced for the same row.
    ///
    /// - Throws: `errSecDecode` when the wrapped key or the row identity was altered.
    public func unwrap(_ wrapped: Data, associatedData: Data) throws -> ItemKey {
        do {
            var bytes = try AES.GCM.open(AES.GCM.SealedBox(combined: wrapped), using: key, authenticating: associatedData)
            defer { bytes.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            guard bytes.count == 32 else { throw KeychainError.decode("wrapped item key has the wrong size") }
            return ItemKey(key: SymmetricKey(data: bytes))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError.decode("the item key failed authentication")
        }
    }
}
