import Crypto
public import FoundationEssentials
public import KeychainModel

/// A 256-bit AES-GCM key that encrypts the metadata blobs of one protection class.
/// Zeroed when dropped (swift-crypto's `SymmetricKey` storage).
public struct MetadataKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }

    /// The key's bytes, for carrying it from the enclave to the daemon.
    public var secretBytes: SecretBytes { key.withUnsafeBytes { SecretBytes($0) } }

    /// A metadata key carried from the enclave.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == 32 else { throw KeychainError.decode("a metadata key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

/// The key of the keyed tokens (blind index) over searchable attributes.
public struct IndexKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }

    /// The key's bytes, for carrying it from the enclave to the daemon.
    public var secretBytes: SecretBytes { key.withUnsafeBytes { SecretBytes($0) } }

    /// An index key carried from the enclave.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == 32 else { throw KeychainError.decode("an index key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

/// A fresh per-item key that encrypts one item's secret; it is stored only wrapped.
public struct ItemKey: Sendable {
    let key: SymmetricKey
    init(key: SymmetricKey) { self.key = key }

    /// A new random 256-bit key.
    public static func generate() -> ItemKey {
        ItemKey(key: SymmetricKey(size: .bits256))
    }

    /// The key's bytes, for carrying it to and from the enclave.
    public var secretBytes: SecretBytes { key.withUnsafeBytes { SecretBytes($0) } }

    /// Reads an item key carried from the enclave.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == 32 else { throw KeychainError.decode("an item key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }
}

/// The key of one protection class. It wraps and unwraps per-item keys, and the class's
/// metadata key derives from it; it never leaves the keybag (the enclave).
public struct ClassKey: Sendable {
    let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    /// A new random class key.
    public static func generate() -> ClassKey {
        ClassKey(key: SymmetricKey(size: .bits256))
    }

    /// A class key from its 32 bytes (known-answer tests; keybag files hold them wrapped).
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == 32 else { throw KeychainError.decode("a class key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// The metadata key of this class: HKDF-SHA256(class key, "trousseau metadata key").
    public func metadataKey() -> MetadataKey {
        MetadataKey(key: derive("trousseau metadata key"))
    }

    /// The index key, derived from the class key of class Always so that it is available
    /// whenever the keychain is: HKDF-SHA256(class key, "trousseau index key").
    public func indexKey() -> IndexKey {
        IndexKey(key: derive("trousseau index key"))
    }

    /// The key that wraps this class's enclave keys (Apple's Secure Enclave keys):
    /// HKDF-SHA256(class key, "trousseau enclave key wrapping"). It is not the key that
    /// wraps item keys, so no request that unwraps an item key for securityd can open an
    /// enclave key's private bytes.
    public func enclaveKeyWrapping() -> ClassKey {
        ClassKey(key: derive("trousseau enclave key wrapping"))
    }

    /// HKDF-SHA256(class key, "trousseau sync key wrapping"): wraps sync keys and the
    /// device's sync identity, apart from item keys and enclave keys.
    public func syncKeyWrapping() -> ClassKey {
        ClassKey(key: derive("trousseau sync key wrapping"))
    }

    private func derive(_ info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(info.utf8), outputByteCount: 32)
    }

    /// Wraps `itemKey` with AES-256-GCM, authenticating `associatedData` (the row identity).
    public func wrap(_ itemKey: ItemKey, associatedData: Data) throws -> Data {
        try KeyWrapping.seal(itemKey.key, with: key, associatedData: associatedData)
    }

    /// Unwraps what ``wrap(_:associatedData:)`` produced for the same row.
    ///
    /// - Throws: `errSecDecode` when the wrapped key or the row identity was altered.
    public func unwrap(_ wrapped: Data, associatedData: Data) throws -> ItemKey {
        ItemKey(key: try KeyWrapping.open(wrapped, with: key, associatedData: associatedData, what: "item key"))
    }
}

/// A key that wraps class keys in the keybag file: derived from the device key alone, or
/// from the device key entangled with the passcode.
public struct WrappingKey: Sendable {
    let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    /// HKDF-SHA256 over `material` (already secret, for example a device-key MAC).
    public init(deriving material: SecretBytes, info: String) {
        key = material.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), info: Data(info.utf8), outputByteCount: 32)
        }
    }

    /// Wraps a class key, authenticating `associatedData` (keybag id, class, wrapping kind).
    public func wrap(_ classKey: ClassKey, associatedData: Data) throws -> Data {
        try KeyWrapping.seal(classKey.key, with: key, associatedData: associatedData)
    }

    /// Unwraps a class key.
    ///
    /// - Throws: `errSecDecode` when this is not the key it was wrapped with, or the data
    ///   was altered.
    public func unwrap(_ wrapped: Data, associatedData: Data) throws -> ClassKey {
        ClassKey(key: try KeyWrapping.open(wrapped, with: key, associatedData: associatedData, what: "class key"))
    }
}

/// AES-256-GCM wrapping of 256-bit keys, with no unzeroed plaintext copy left behind.
enum KeyWrapping {
    /// The size of every wrapped key: AES-256.
    static let keyByteCount = 32

    /// Seals `wrapped` straight from its own storage.
    static func seal(_ wrapped: SymmetricKey, with key: SymmetricKey, associatedData: Data) throws -> Data {
        try wrapped.withUnsafeBytes { bytes in
            try AESGCM.seal(bytes, using: key, authenticating: associatedData)
        }
    }

    static func open(_ wrapped: Data, with key: SymmetricKey, associatedData: Data, what: String) throws -> SymmetricKey {
        do {
            if wrapped.count == AESGCM.nonceByteCount + keyByteCount + AESGCM.tagByteCount {
                // Opened on the stack and zeroed there: no heap copy of the key to allocate,
                // zero and free (a fifth of the enclave's work per unwrap).
                return try withUnsafeTemporaryAllocation(byteCount: keyByteCount, alignment: 16) { bytes in
                    defer { SecretBytes.zero(bytes) }
                    try wrapped.withUnsafeBytes { try AESGCM.open($0, into: bytes, using: key, authenticating: associatedData) }
                    return SymmetricKey(data: UnsafeRawBufferPointer(bytes))
                }
            }
            var bytes = try AESGCM.open(wrapped, using: key, authenticating: associatedData)
            defer { bytes.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            guard bytes.count == keyByteCount else { throw KeychainError.decode("wrapped \(what) has the wrong size") }
            return SymmetricKey(data: bytes)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError.decode("the \(what) failed authentication")
        }
    }
}

/// The device's 256-bit secret in software (the file backend of the device key). It only
/// computes MACs, so a hardware backend (TPM HMAC) can stand in for it.
public struct DeviceSecret: Sendable {
    let key: SymmetricKey

    /// The size of a device secret in bytes.
    public static let byteCount = 32

    /// A new random device secret.
    public static func generate() -> DeviceSecret {
        DeviceSecret(key: SymmetricKey(size: .bits256))
    }

    /// Reads a device secret from its stored bytes.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == Self.byteCount else { throw KeychainError.decode("a device key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    init(key: SymmetricKey) { self.key = key }

    /// The bytes to store, for example in a 0600 file.
    public var secretBytes: SecretBytes {
        key.withUnsafeBytes { SecretBytes($0) }
    }

    /// HMAC-SHA256 of `message` under the device secret.
    public func authenticationCode(for message: Data) -> SecretBytes {
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return mac.withUnsafeBytes { SecretBytes($0) }
    }
}
