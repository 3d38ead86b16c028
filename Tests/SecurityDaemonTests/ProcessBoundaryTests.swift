import Foundation
import KeychainServer
import KeychainTestSupport
import Testing

/// The process split as a fact of the link: securityd, which parses every client's bytes,
/// contains none of the keybag (class keys, the device key, sensors, the enclave server);
/// trousseau-enclave does (here in the test build; InstallationTests checks the release
/// programs). And every request securityd's protocol declares has a handler.
@Suite struct ProcessBoundaryTests {
    @Test func securitydDoesNotLinkTheKeybag() throws {
        let products = CommandRunner.productsDirectory
        #expect(try BinaryMarkers.found(BinaryMarkers.keybag, in: products.appendingPathComponent("securityd").path) == [])
        #expect(try BinaryMarkers.found(BinaryMarkers.keybag, in: products.appendingPathComponent("trousseau-enclave").path) == BinaryMarkers.keybag,
                "the check would not see a marker in a binary that links it")
    }

    /// Test builds carry the hooks (so the release check would see them); the release
    /// programs `scripts/install` installs are checked for none in InstallationTests.
    @Test func testBuildsCarryTheHooksTheReleaseCheckLooksFor() throws {
        let securityd = CommandRunner.productsDirectory.appendingPathComponent("securityd").path
        #expect(try !BinaryMarkers.found(BinaryMarkers.testHooks, in: securityd).isEmpty)
    }

    @Test func everyRequestHasAHandler() {
        #expect(RequestDispatcher.unservedRequests.isEmpty)
    }
}
