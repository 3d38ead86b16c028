import CSystemd
import FoundationEssentials
import KeychainCallers
import KeychainModel
import KeychainStore

#if canImport(Glibc)
import Glibc
#endif

/// `org.freedesktop.impl.portal.Secret`, the back end of xdg-desktop-portal's Secret portal:
/// each sandboxed app's master secret (libsecret inside Flatpak keeps its own file keyring
/// under it). The secret is 64 random bytes, kept as an item of that app's own scope
/// (attributes `app_id` and `xdg:schema=org.freedesktop.portal.Secret`), so the app also
/// finds it through the Secret Service and nobody else does.
///
/// Only xdg-desktop-portal may ask: the app id is the portal's word, and anyone else could
/// name any app. The portal is recognised by its executable (CallerScopes).
enum SecretPortal {
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Secret"
    static let schema = "org.freedesktop.portal.Secret"
    static let secretSize = 64

    /// The app's master secret, made the first time it is asked for.
    static func secret(for appID: String, in store: KeychainStore) throws -> SecretBytes {
        guard let scope = SecretScope.flatpak(appID) else { throw KeychainError(status: OSStatusCode.param, message: "not a valid application id") }
        let attributes = ["app_id": appID, "xdg:schema": schema]
        if let existing = try store.secretServiceItems(in: scope.accessGroups, matching: attributes).first {
            return try store.secretServiceSecret(id: existing.id, in: scope.accessGroups).0
        }
        var generator = SystemRandomNumberGenerator()
        let secret = SecretBytes((0..<secretSize).map { _ in UInt8.random(in: 0...255, using: &generator) })
        _ = try store.createSecretServiceItem(
            in: scope.accessGroups, label: "Application key for \(appID)", attributes: attributes, secret: secret,
            contentType: "application/octet-stream", replace: false)
        return secret
    }

    /// Writes all of `secret` to `fd` (the write end of the app's pipe).
    static func write(_ secret: SecretBytes, to fd: Int32) -> Bool {
        secret.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}
