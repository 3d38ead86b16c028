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
    static let interface = BusInterface(
        "org.freedesktop.impl.portal.Secret",
        methods: [
            BusMethod("RetrieveSecret", in: ["handle": "o", "app_id": "s", "fd": "h", "options": "a{sv}"], out: ["response": "u", "results": "a{sv}"]) {
                try retrieveSecret($0, $1)
            }
        ],
        properties: [BusProperty(name: "version", type: "u")])
    static let properties: [(String, BusValue)] = [("version", .uint32(1))]
    static let schema = "org.freedesktop.portal.Secret"
    static let secretSize = 64

    /// Writes the app's secret to the fd the portal gave; response 0, or 2 (failed: no valid
    /// app id — a host app, which has no sandbox to key — or the keychain is locked).
    private static func retrieveSecret(_ core: SecretServiceCore, _ call: BusInvocation) throws -> [BusValue] {
        let appID = try call.arguments[1].string()
        let fd = try call.arguments[2].unixFD()
        guard core.peers?.isPortal(call.call.sender) == true else {
            throw BusError.accessDenied("only xdg-desktop-portal retrieves applications' secrets")
        }
        var response: UInt32 = 2
        if SecretScope.flatpak(appID) != nil, !core.store.secretServiceIsLocked(), let secret = try? secret(for: appID, in: core.store), write(secret, to: fd) {
            response = 0
        }
        return [.uint32(response), .properties([])]
    }

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
