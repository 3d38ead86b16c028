import Enclave
import FoundationEssentials
import KeychainModel
import KeychainStore

/// Where the keychain lives: `KEYCHAIN_HOME`, else `$XDG_DATA_HOME/trousseau`, else
/// `~/.local/share/trousseau`.
enum KeychainLocation {
    static var home: String {
        let environment = ProcessInfo.processInfo.environment
        if let home = environment["KEYCHAIN_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/trousseau" }
        return (environment["HOME"] ?? "/tmp") + "/.local/share/trousseau"
    }

    static var databasePath: String { home + "/" + KeychainStore.databaseFileName }

    /// The access group of items this tool creates. Until securityd identifies callers from
    /// their code signatures, the tool opens the store itself and uses one fixed group.
    static let caller = AccessGroups(["trousseau.security-tool"])

    /// Opens the store, with its class keys in an enclave process started for this run.
    static func openStore() throws -> KeychainStore {
        try openKeychain().store
    }

    /// The store and the enclave that holds its keys.
    static func openKeychain() throws -> (store: KeychainStore, enclave: EnclaveClient) {
        try createParents(of: home)
        try KeychainStore.prepareHome(home)
        let enclave = try EnclaveClient.launch(home: home)
        return (try KeychainStore(directory: home, keybag: enclave), enclave)
    }

    /// Creates the parent directories of `path` (0700), as `mkdir -p` would.
    private static func createParents(of path: String) throws {
        var prefix = ""
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            _ = mkdir(prefix, 0o700)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
