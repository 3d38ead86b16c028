import Enclave
import FoundationEssentials
import KeychainModel
import KeychainStore

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
        enclave = try EnclaveClient.launch(home: self.home, unsafeFastPasscodeKDF: true)
        store = try KeychainStore(directory: self.home, keybag: enclave)
    }

    /// Restarts the enclave (a reboot, as far as the keybag knows) and reopens the store.
    public func restart() throws {
        enclave = try EnclaveClient.launch(home: home, unsafeFastPasscodeKDF: true)
        store = try KeychainStore(directory: home, keybag: enclave)
    }

    deinit {
        try? FileManagerLite.removeTree(home)
    }
}
