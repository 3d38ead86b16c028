import KeychainModel

/// `SecAccessControlCreateFlags`: the constraints an access control puts on an item's secret.
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = biometryAny
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = biometryCurrentSet
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    static let known: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .or, .and, .privateKeyUsage,
        .applicationPassword,
    ]
    /// The flags that make reading the secret need the user (or an application password).
    static let authentication: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .applicationPassword,
    ]
}

/// An access control (`kSecAttrAccessControl`): a protection class and the constraints on
/// reading the item's secret.
public final class SecAccessControl: NSObject, Sendable {
    /// The protection class (`kSecAttrAccessible…` value).
    let protection: ProtectionClass
    let flags: SecAccessControlCreateFlags

    init(protection: ProtectionClass, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    /// Whether reading the secret needs the user's presence or an application password.
    var requiresAuthentication: Bool {
        !flags.isDisjoint(with: .authentication)
    }
}

/// Creates an access control from a protection class (`kSecAttrAccessible…`) and flags.
///
/// Returns nil and sets `error` to an `NSOSStatusErrorDomain` error with `errSecParam` for
/// a protection that is not a `kSecAttrAccessible…` value, unknown flags, or `.or` with `.and`.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    func fail(_ reason: String) -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(
            NSError(domain: NSOSStatusErrorDomain, code: Int(errSecParam), userInfo: [NSLocalizedDescriptionKey: reason]))
        return nil
    }
    guard let name = protection as? String, let protectionClass = ProtectionClass(rawValue: name) else {
        return fail("the protection is not a kSecAttrAccessible value")
    }
    guard flags.isSubset(of: .known) else {
        return fail("unknown SecAccessControlCreateFlags \(flags.subtracting(.known).rawValue)")
    }
    if flags.contains(.or) && flags.contains(.and) {
        return fail("an access control cannot combine .or and .and")
    }
    return SecAccessControl(protection: protectionClass, flags: flags)
}
