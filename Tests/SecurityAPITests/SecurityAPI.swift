import Foundation
import KeychainTestSupport
import Security
import Testing

/// Every suite of this target, one at a time: the Security API has one keychain per
/// process, and some suites switch it (to lock one, or to start from an empty one).
@Suite(.serialized) struct SecurityAPI {
    /// The keychain most suites share, in a temporary home with its own securityd.
    static let sharedKeychain: DaemonKeychain = try! DaemonKeychain()

    /// Points the Security functions at the shared keychain; returns a service name no other
    /// test uses, so that each test sees only its own items.
    static func useSharedKeychain() -> String {
        use(sharedKeychain)
        return "com.example.tests." + UUID().uuidString
    }

    /// Points the Security functions at `keychain` (its daemon started on first use).
    static func use(_ keychain: DaemonKeychain, systemSocket: String? = nil) {
        TrousseauKeychain.use(
            home: keychain.home,
            daemonEnvironment: CommandRunner.testEnvironment.merging(["TROUSSEAU_SECURITYD_LOG": keychain.log]) { $1 },
            systemSocket: systemSocket)
    }

    /// A generic-password query dictionary, as Apple-platform code writes one.
    static func genericPassword(service: String, account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
            .merging(extra) { $1 }
    }
}
