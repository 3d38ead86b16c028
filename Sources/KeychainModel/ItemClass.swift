/// The five keychain item classes, with Apple's `kSecClass` raw values.
public enum ItemClass: String, Sendable, CaseIterable, Hashable {
    /// `kSecClassGenericPassword`.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword`.
    case internetPassword = "inet"
    /// `kSecClassCertificate`.
    case certificate = "cert"
    /// `kSecClassKey`.
    case key = "keys"
    /// `kSecClassIdentity`: a certificate joined with its private key
    /// (`cert.pkhh == keys.klbl` and `keys.kcls` private). It has no table of its own.
    case identity = "idnt"

    /// The classes stored in a table of their own (all but identity).
    public static let stored: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// The protection class an item gets when the caller names none:
    /// `kSecAttrAccessibleWhenUnlocked`, except certificates, which are `Always`.
    public var defaultProtection: ProtectionClass {
        self == .certificate ? .always : .whenUnlocked
    }
}
