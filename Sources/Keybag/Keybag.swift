public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

/// The source of every key the store uses. The store never sees a class key: it asks the
/// keybag to wrap and unwrap per-item keys, and receives only metadata and index keys,
/// which it may cache.
///
/// The keybag/enclave issue replaces the in-process ``DeviceKeybag`` with one whose class
/// keys live in a separate process and depend on the lock state.
public protocol Keybag: Sendable {
    /// The key of the keyed tokens, available in every lock state (like class Always).
    func indexKey() throws -> IndexKey

    /// The metadata key of `protection`.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is not available now.
    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey

    /// Wraps a per-item key under the class key of `protection`.
    func wrapItemKey(_ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data) throws -> Data

    /// Unwraps a per-item key wrapped by ``wrapItemKey(_:for:associatedData:)``.
    ///
    /// - Throws: `errSecDecode` when the wrapped key or its associated data was altered;
    ///   `errSecInteractionNotAllowed` when the class is not available now.
    func unwrapItemKey(_ wrapped: Data, for protection: ProtectionClass, associatedData: Data) throws -> ItemKey
}
