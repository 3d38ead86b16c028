// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Dispatch
import Enclave
import EnclaveBackend
import KeychainSystem
import Glibc
import FoundationEssentials
import KeychainModel
import KeychainStore
@testable public import KeychainCallers

/// A keychain in a temporary `KEYCHAIN_HOME` whose keys live in a real enclave process,
/// started with the fast (test-only) passcode KDF. ``restart()`` kills nothing: it closes
/// the connection, the enclave exits, and a new one boots.
public final class EnclaveKeychain: @unchecked Sendable {
    // @unchecked: mutated only by restart(), which tests call from one task.
    public let home: String
    public private(set) var enclave: EnclaveClient
    public private(set) var store: KeychainStore
    public let caller = AccessGroups(["test.group"])

    public init(home: String? = nil) throws {
        self.home = try home ?? TemporaryKeychain.makeTemporaryDirectory()
        enclave = try EnclaveClient.launch(home: self.home, .fastPasscodeKDF)
        store = try KeychainStore(directory: self.home, keybag: enclave)
    }

    /// Restarts the enclave (a reboot, as far as the keybag knows) and reopens the store.
    public func restart() throws {
        enclave = try EnclaveClient.launch(home: home, .fastPasscodeKDF)
        store = try KeychainStore(directory: home, keybag: enclave)
    }

    deinit {
        try? FileManagerLite.removeTree(home)
    }
}

extension EnclaveClient.Launch {
    /// The enclave beside the test bundle, deriving passcodes cheaply (test builds; a
    /// release build of the tests gets the full-cost KDF).
    public static var fastPasscodeKDF: Self {
        var launch = Self()
        launch.deviceKeyBackend = SoftwareTPM.suiteBackend
        #if TROUSSEAU_TEST_HOOKS
        launch.unsafeFastPasscodeKDF = true
        #endif
        return launch
    }
}

extension EnclaveClient {
    /// Serves `keybag` on a thread of this process over the enclave protocol and a
    /// socketpair, for tests that want the protocol without a second process. (securityd
    /// cannot do this: it does not link the keybag.)
    public static func inProcess(_ keybag: SoftwareKeybag) throws -> EnclaveClient {
        let (client, server) = try UnixSocket.pair()
        DispatchQueue.global().async {
            EnclaveServer(keybag: keybag, memoryLocked: false).serve(fd: server)
            close(server)
        }
        return .connected(to: client)
    }
}
#endif
