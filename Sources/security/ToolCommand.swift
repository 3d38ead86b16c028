import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol

/// One command of the tool: its name, the usage line `help <command>` and a usage error
/// print, its one-line description, and what it runs.
///
/// A command returns its status as macOS's do: 0, an OSStatus (the process exits with its
/// low byte: errSecItemNotFound → 44), 1 for a failure already reported, or
/// ``ToolCommand/showUsage`` for a usage error, after which the tool prints the usage.
struct ToolCommand: Sendable {
    static let showUsage: Int32 = 2

    let name: String
    let usage: String
    let help: String
    let run: @Sendable (_ arguments: [String], _ session: ToolSession) -> Int32
    /// The words `-v` echoes: the arguments, with any secret among them hidden.
    var echo: @Sendable (_ arguments: [String]) -> [String] = { $0 }
}

/// What one run of the tool shares between its commands (several with `-i`): the global
/// flags and the connection to the keychain's daemon, made on first use.
final class ToolSession {
    let paths = KeychainPaths.fromEnvironment()
    let quiet: Bool
    let verbose: Bool
    private var client: KeychainClient?

    init(quiet: Bool, verbose: Bool) {
        self.quiet = quiet
        self.verbose = verbose
    }

    /// The keychain's database path, as items print it.
    var keychainPath: String { paths.database }

    /// The daemon's connection, started when it is not running.
    func keychain() throws(KeychainError) -> KeychainClient {
        if let client { return client }
        do {
            let connected = try KeychainClient.connect(paths)
            client = connected
            return connected
        } catch {
            throw KeychainError.from(error)
        }
    }

    /// Sends `request`; when securityd answers that it needs the user's presence (another
    /// application's item, or the local developer root, once a keychain password is set),
    /// asks for the keychain password once and sends the request again with it.
    @discardableResult
    func call<Request: ServiceRequest>(
        _ request: Request, purpose: String = "access another application's items"
    ) throws(KeychainError) -> Request.Response {
        let client = try keychain()
        do {
            // An item whose access control needs the user asks them through the front end
            // (the passcode agent or the terminal), in a context used once.
            do {
                return try client.call(request, in: nil)
            } catch let error as KeychainError where error.status == OSStatusCode.interactionRequired {
                guard let passcode = PasswordPrompt.read("password to \(purpose) in \(keychainPath): ") else { throw error }
                return try client.call(request, in: nil, presence: passcode)
            }
        } catch {
            throw KeychainError.from(error)
        }
    }

    /// Whether `name`, a keychain argument, names this keychain: its database path, or a
    /// name scripts written for macOS use for the login keychain (`login`,
    /// `login.keychain`, `login.keychain-db`, `~/Library/Keychains/login.keychain-db`).
    func names(keychain name: String) -> Bool {
        let macOSLogin = (ProcessInfo.processInfo.environment["HOME"] ?? "~") + "/Library/Keychains/login.keychain"
        if name.contains("/") { return [keychainPath, macOSLogin, macOSLogin + "-db"].contains(name) }
        return [KeychainPaths.databaseFileName, "login", "login.keychain", "login.keychain-db"].contains(name)
    }

    /// macOS's System Roots keychain: the operating system's CA bundle here, read-only.
    static let systemRootsPath = "/System/Library/Keychains/SystemRootCertificates.keychain"

    /// Whether `name` names System Roots: macOS's path or file name, or the CA bundle's path.
    func namesSystemRoots(_ name: String) -> Bool {
        [Self.systemRootsPath, "SystemRootCertificates.keychain", "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
            .contains(name)
    }
}
