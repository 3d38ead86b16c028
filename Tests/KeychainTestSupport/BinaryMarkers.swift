// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation
import KeychainSystem

/// Strings whose presence in a program's file shows what it links: the process boundary
/// (securityd must not contain the keybag) and release builds (no test hook at all).
public enum BinaryMarkers {
    /// Names only the keybag's module defines: its module name as Swift mangles it, and its types.
    public static let keybag = ["14EnclaveBackend", "SoftwareKeybag", "FileDeviceKey", "EnclaveServer", "FprintdSensor"]

    /// Modules of the network stack, as Swift mangles their names: AsyncHTTPClient, NIO's
    /// core, its TLS and the WebSocket client (the sync agent links them, securityd must not).
    public static let network = ["15AsyncHTTPClient", "7NIOCore", "6NIOSSL", "6WSCore"]

    /// Every test hook's variable and flag (`TestHook`, the one list), and the scripted
    /// sensor's type as Swift mangles it.
    public static let testHooks = TestHook.allCases.map(\.rawValue) + TestHook.enclaveFlags + ["10TestSensor"]

    /// Which of `markers` the file at `path` contains.
    public static func found(_ markers: [String], in path: String) throws -> [String] {
        let binary = try Data(contentsOf: URL(fileURLWithPath: path))
        return markers.filter { binary.range(of: Data($0.utf8)) != nil }
    }
}
#endif
