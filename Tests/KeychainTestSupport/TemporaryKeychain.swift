// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import FoundationEssentials
import KeychainModel
import KeychainStore
import EnclaveBackend
import Glibc
@testable public import KeychainCallers

/// A keychain in a fresh temporary `KEYCHAIN_HOME`, removed when dropped. Its keybag runs
/// in-process (``SoftwareKeybag``, the enclave's own backend behind the same `Keybag`
/// protocol); tests of the enclave process itself use `EnclaveClient.launch`.
public final class TemporaryKeychain: @unchecked Sendable {
    // @unchecked: all stored properties are immutable after init.
    public let home: String
    public let store: KeychainStore
    /// The store's keybag (to set a passcode, lock and unlock).
    public let keybag: SoftwareKeybag
    /// The access groups tests act with: "test.group" is the default.
    public let caller = AccessGroups(["test.group", "test.shared"])

    public init() throws {
        home = try Self.makeTemporaryDirectory()
        keybag = try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home))
        store = try KeychainStore(directory: home, keybag: keybag)
    }

    deinit {
        try? FileManagerLite.removeTree(home)
    }

    /// The database file, its WAL and its shared-memory file.
    public var databaseFiles: [String] {
        let db = home + "/" + KeychainStore.databaseFileName
        return [db, db + "-wal", db + "-shm"]
    }

    public static func makeTemporaryDirectory() throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array((base + "/trousseau-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw KeychainError.io }
        return String(cString: made)
    }
}

/// Recursive removal without Foundation's FileManager.
public enum FileManagerLite {
    public static func removeTree(_ path: String) throws {
        guard let dir = opendir(path) else {
            unlink(path)
            return
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            if entry.pointee.d_type == UInt8(DT_DIR) {
                try removeTree(child)
            } else {
                unlink(child)
            }
        }
        rmdir(path)
    }
}

extension Data {
    /// UTF-8 bytes of a string, for test values.
    public init(utf8 string: String) {
        self.init(string.utf8)
    }
}

/// A test suite that works on its own temporary keychain: conformers declare
/// `let keychain: TemporaryKeychain` and get `store` and `caller`.
public protocol KeychainSuite {
    var keychain: TemporaryKeychain { get }
}

extension KeychainSuite {
    public var store: KeychainStore { keychain.store }
    public var caller: AccessGroups { keychain.caller }
}
#endif
