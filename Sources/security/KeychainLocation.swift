import KeychainClient
import KeychainModel

/// The keychain this run works on, reached through its securityd.
enum KeychainLocation {
    static let paths = KeychainPaths.fromEnvironment()

    static var databasePath: String { paths.database }

    /// Connects to the keychain's daemon, starting it when it is not running.
    static func connect() throws -> KeychainClient {
        try KeychainClient.connect(paths)
    }
}
