/// What an item's sync flag, protection class and access control must satisfy together.
/// One place, checked on add (the query as parsed, and the item as it will be stored) and
/// after an update's changes are applied.
public enum ItemRules {
    /// - Throws: `errSecParam` for a synchronizable item whose access control has
    ///   constraints (flags): the proofs it asks for never leave the device.
    public static func check(synchronizable: Bool, protection: ProtectionClass?, constrainedAccess: Bool) throws {
        // Apple refuses only an access control with constraints (SecItem.m,
        // SecItemAuthDoQuery: "item with kSecAttrAccessControl is not synchronizable"). A
        // synchronizable ThisDeviceOnly item is stored as asked (Apple's securityd has no
        // such check, and KeychainAccess's tests make one); it still never leaves the device:
        // its class keys do not open anywhere else, in a backup or a sync.
        guard synchronizable, constrainedAccess else { return }
        throw KeychainError.param("item with kSecAttrAccessControl is not synchronizable")
    }
}
