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

    /// Wraps a per-item key under the class key of `protection`. With an access control,
    /// binds it (and what it must be checked against) into the wrapping and returns it as
    /// it must be stored; `context` supplies an application password it requires.
    ///
    /// - Throws: `errSecAuthFailed` for an access control nobody could satisfy now;
    ///   `errSecAuthNeeded` when it requires an application password the context lacks.
    func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?)

    /// Unwraps a per-item key wrapped by ``wrapItemKey(_:for:associatedData:access:context:)``,
    /// once `context` has proven what `access` asks for.
    ///
    /// - Throws: `errSecDecode` when the wrapped key, its associated data or the access
    ///   control was altered; `errSecInteractionNotAllowed` when the class is not available
    ///   now; `errSecAuthNeeded` when the context has not proven enough; `errSecAuthFailed`
    ///   for a wrong application password or a changed biometric enrollment.
    func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey
}

extension Keybag {
    /// Wraps a per-item key with no access control.
    public func wrapItemKey(_ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data) throws -> Data {
        try wrapItemKey(itemKey, for: protection, associatedData: associatedData, access: nil, context: nil).wrapped
    }

    /// Unwraps a per-item key with no access control.
    public func unwrapItemKey(_ wrapped: Data, for protection: ProtectionClass, associatedData: Data) throws -> ItemKey {
        try unwrapItemKey(wrapped, for: protection, associatedData: associatedData, access: nil, context: nil)
    }
}
