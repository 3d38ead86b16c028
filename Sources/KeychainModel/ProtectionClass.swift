/// A data-protection class (`kSecAttrAccessible`, stored as `pdmn`).
public enum ProtectionClass: String, Codable, Sendable, CaseIterable, Hashable {
    /// `kSecAttrAccessibleWhenUnlocked`.
    case whenUnlocked = "ak"
    /// `kSecAttrAccessibleAfterFirstUnlock`.
    case afterFirstUnlock = "ck"
    /// `kSecAttrAccessibleAlways` (deprecated by Apple, still accepted).
    case always = "dk"
    /// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`.
    case whenUnlockedThisDeviceOnly = "aku"
    /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`.
    case afterFirstUnlockThisDeviceOnly = "cku"
    /// `kSecAttrAccessibleAlwaysThisDeviceOnly`.
    case alwaysThisDeviceOnly = "dku"
    /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`.
    case whenPasscodeSetThisDeviceOnly = "akpu"

    /// Whether items of this class stay on the device that wrapped them
    /// (never synced; restored only to the same device).
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock, .always: false
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly,
            .whenPasscodeSetThisDeviceOnly:
            true
        }
    }
}
