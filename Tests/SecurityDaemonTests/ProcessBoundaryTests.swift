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
    /// securityd holds the keys and parses every client's bytes: it links no network stack
    /// (the sync agent, its child, speaks to the sync server).
    @Test func securitydDoesNotLinkTheNetwork() throws {
        let products = CommandRunner.productsDirectory
        #expect(try BinaryMarkers.found(BinaryMarkers.network, in: products.appendingPathComponent("securityd").path) == [])
        #expect(try BinaryMarkers.found(BinaryMarkers.network, in: products.appendingPathComponent("trousseau-sync-agent").path) == BinaryMarkers.network,
                "the check would not see a marker in a binary that links it")
    }

    @Test func testBuildsCarryTheHooksTheReleaseCheckLooksFor() throws {
        let securityd = CommandRunner.productsDirectory.appendingPathComponent("securityd").path
        #expect(try !BinaryMarkers.found(BinaryMarkers.testHooks, in: securityd).isEmpty)
    }

    @Test func everyRequestHasAHandler() {
        #expect(RequestDispatcher.unservedRequests.isEmpty)
    }
}
