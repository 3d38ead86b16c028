/// What an item's sync flag, protection class and access control must satisfy together.
/// One place, checked on add (the query as parsed, and the item as it will be stored) and
/// after an update's changes are applied.
public enum ItemRules {
    /// - Throws: `errSecParam` for a synchronizable item with an access control (the keys
    ///   it binds never leave the device) or with a ThisDeviceOnly class.
    public static func check(synchronizable: Bool, protection: ProtectionClass?, hasAccessControl: Bool) throws {
        guard synchronizable else { return }
        if hasAccessControl {
            throw KeychainError.param("a synchronizable item cannot have an access control")
        }
        if let protection, protection.isThisDeviceOnly {
            throw KeychainError.param("a ThisDeviceOnly item cannot be synchronizable")
        }
    }
}
