import Foundation
import KeychainModel

/// `SecAccessControlCreateFlags`: the constraints an access control puts on an item's secret.
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.userPresence.rawValue))
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.biometryAny.rawValue))
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = biometryAny
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.biometryCurrentSet.rawValue))
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = biometryCurrentSet
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.devicePasscode.rawValue))
    public static let watch = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.companion.rawValue))
    public static let companion = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.companion.rawValue))
    public static let or = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.or.rawValue))
    public static let and = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.and.rawValue))
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.privateKeyUsage.rawValue))
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: CFOptionFlags(AccessControl.Flags.applicationPassword.rawValue))
}

/// An access control (`kSecAttrAccessControl`): a protection class and the constraints on
/// reading the item's secret, which the enclave enforces.
public final class SecAccessControl: NSObject, Sendable {
    let accessControl: AccessControl

    init(_ accessControl: AccessControl) {
        self.accessControl = accessControl
    }
}

/// Creates an access control from a protection class (`kSecAttrAccessible…`) and flags.
///
/// Returns nil and sets `error` to an `NSOSStatusErrorDomain` error with `errSecParam` and
/// Apple's message for a protection that is not a `kSecAttrAccessible…` value, unknown
/// flags, `.or` with `.and`, both biometry flags, or `.userPresence` with another constraint.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    do {
        guard let name = protection as? String, let protectionClass = ProtectionClass(rawValue: name) else {
            throw KeychainError.param("SecAccessControl: invalid protection: \(protection)")
        }
        return SecAccessControl(try AccessControl(protection: protectionClass, flags: AccessControl.Flags(rawValue: UInt64(flags.rawValue))))
    } catch let failure as KeychainError {
        failure.report(to: error)
        return nil
    } catch {
        return nil
    }
}

/// The protection class of an access control (`kSecAttrAccessible…`).
public func SecAccessControlGetProtection(_ accessControl: SecAccessControl) -> CFTypeRef {
    accessControl.accessControl.protection.rawValue as CFString
}
