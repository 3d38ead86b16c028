import Foundation
import KeychainServer
import KeychainTestSupport
import Testing

/// The process split as a fact of the link: securityd, which parses every client's bytes,
/// contains none of the keybag (class keys, the device key, sensors, the enclave server);
/// trousseau-enclave does. And every request securityd's protocol declares has a handler.
@Suite struct ProcessBoundaryTests {
    /// Names only the keybag's module defines: its module name as Swift mangles it, and
    /// its types.
    static let keybagMarkers = ["14EnclaveBackend", "SoftwareKeybag", "FileDeviceKey", "EnclaveServer", "FprintdSensor"]

    static func contains(_ binary: Data, _ marker: String) -> Bool {
        binary.range(of: Data(marker.utf8)) != nil
    }

    @Test func securitydDoesNotLinkTheKeybag() throws {
        let securityd = try Data(contentsOf: CommandRunner.productsDirectory.appendingPathComponent("securityd"))
        let enclave = try Data(contentsOf: CommandRunner.productsDirectory.appendingPathComponent("trousseau-enclave"))
        for marker in Self.keybagMarkers {
            #expect(!Self.contains(securityd, marker), "securityd contains \(marker)")
            #expect(Self.contains(enclave, marker), "the check would not see \(marker) in a binary that links it")
        }
    }

    @Test func releaseBuildsContainNoTestHooks() throws {
        #if !TROUSSEAU_TEST_HOOKS
        for product in ["securityd", "trousseau-enclave", "security"] {
            let binary = try Data(contentsOf: CommandRunner.productsDirectory.appendingPathComponent(product))
            // "10TestSensor": the type as Swift mangles it (the file name alone may remain in debug info).
            for hook in [
                "10TestSensor", "--test-sensor", "--unsafe-fast-kdf", "TROUSSEAU_TEST_SENSOR", "TROUSSEAU_UNSAFE_FAST_KDF",
                "--test-enclave-key-seed", "TROUSSEAU_TEST_ENCLAVE_KEY_SEED", "TROUSSEAU_TEST_ADMIN_TRUST_SETTINGS",
            ] {
                #expect(!Self.contains(binary, hook), "\(product) contains \(hook)")
            }
        }
        #endif
    }

    @Test func everyRequestHasAHandler() {
        #expect(RequestDispatcher.unservedRequests.isEmpty)
    }
}
