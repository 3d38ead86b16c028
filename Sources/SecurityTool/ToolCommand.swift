import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainSystem

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
    /// The System keychain's daemon, connected when a command first names it.
    private var systemClient: KeychainClient?

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

    /// The System keychain's daemon (run by its system unit; never started here).
    func systemKeychain() throws(KeychainError) -> KeychainClient {
        if let systemClient { return systemClient }
        do {
            let connected = try KeychainClient.connectSystem()
            systemClient = connected
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
        var request = request
        if case .file(let path)? = scope, var scoped = request as? any KeychainScopedRequest {
            scoped.scope(to: path)
            request = scoped as! Request  // the same value, with its query scoped
        }
        let client = try scope == .system ? systemKeychain() : keychain()
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

    /// The keychain a keychain argument names (macOS's rules: ``KeychainName/resolve(_:_:environment:)``).
    func resolve(_ name: String) -> KeychainName {
        KeychainName.resolve(name, paths)
    }

    /// Whether `name`, a keychain argument, names the login keychain.
    func names(keychain name: String) -> Bool {
        resolve(name) == .login
    }

    /// Whether `name` names System Roots: macOS's path or file name, or the CA bundle's path.
    func namesSystemRoots(_ name: String) -> Bool {
        resolve(name) == .systemRoots
    }

    /// The keychains a command's trailing keychain arguments name, in order; the user's
    /// search list when there are none.
    func keychains(_ operands: [String]) throws(KeychainError) -> [KeychainName] {
        guard operands.isEmpty else { return operands.map(resolve) }
        do {
            return try preferences.list().map { KeychainName.listed($0, paths) }
        } catch {
            throw KeychainError.from(error)
        }
    }

    /// The keychain additions go to when none is named: the default keychain.
    func defaultKeychain() throws(KeychainError) -> KeychainName {
        do {
            return KeychainName.listed(try preferences.defaultKeychain(), paths)
        } catch {
            throw KeychainError.from(error)
        }
    }

    /// The search list and default keychain, read from the files securityd writes (as
    /// macOS's tool reads its preferences): no round trip before a search.
    private var preferences: KeychainSearchList { KeychainSearchList(home: paths.home, loginPath: paths.database) }

    /// The keychain item requests go to while `body` runs: a file keychain's path rides in
    /// the query (`kSecUseKeychain` for an add, `kSecMatchSearchList` for the others); the
    /// System keychain's requests go to its own daemon; the login keychain needs neither.
    func scoped<T>(to keychain: KeychainName, _ body: () throws(KeychainError) -> T) throws(KeychainError) -> T {
        let saved = scope
        scope = switch keychain {
        case .file, .system: keychain
        case .login, .systemRoots: nil
        }
        defer { scope = saved }
        return try body()
    }

    /// The first thing `body` finds in the keychains `operands` name (the search list when
    /// none), in order, with the keychain it was found in. A keychain of the search list
    /// that no longer exists is passed over, as macOS passes over one; any other failure
    /// (a locked keychain: errSecInteractionNotAllowed) ends the search.
    func firstFound<T>(in operands: [String], _ body: () throws(KeychainError) -> T?) throws(KeychainError) -> (T, KeychainName)? {
        for keychain in try keychains(operands) {
            switch keychain {
            case .systemRoots: continue  // no items of this kind there
            case .login, .file, .system:
                do throws(KeychainError) {
                    if let found = try scoped(to: keychain, body) { return (found, keychain) }
                } catch where operands.isEmpty && keychain.isPassedOver(error) {
                    continue
                } catch where error.status == .itemNotFound {
                    continue
                }
            }
        }
        return nil
    }

    /// The file keychain or System keychain item requests go to now (``scoped(to:_:)``).
    private(set) var scope: KeychainName?
}

/// An item request that can be sent to a file keychain.
protocol KeychainScopedRequest {
    mutating func scope(to path: String)
}

extension Service.Add: KeychainScopedRequest {
    mutating func scope(to path: String) { attributes[SecName.kSecUseKeychain] = .string(path) }
}

extension Service.CopyMatching: KeychainScopedRequest {
    mutating func scope(to path: String) { query[SecName.kSecMatchSearchList] = .array([.string(path)]) }
}

extension Service.Update: KeychainScopedRequest {
    mutating func scope(to path: String) { query[SecName.kSecMatchSearchList] = .array([.string(path)]) }
}

extension Service.Delete: KeychainScopedRequest {
    mutating func scope(to path: String) { query[SecName.kSecMatchSearchList] = .array([.string(path)]) }
}

extension KeychainName {
    /// Whether a search of the search list passes over this keychain after `error`: a file
    /// keychain that is gone (as macOS passes over one), or the System keychain while its
    /// daemon is not running. Anything else — the login keychain's daemon missing, a locked
    /// keychain — ends the search.
    func isPassedOver(_ error: KeychainError) -> Bool {
        switch self {
        case .file: [.noSuchKeychain, .invalidKeychain].contains(error.status)
        case .system: error.status == .notAvailable
        case .login, .systemRoots: false
        }
    }

    /// Whether no item can be written here (errSecReadOnly): System Roots. The System
    /// keychain's daemon decides for itself (root may write, others not).
    var isReadOnly: Bool { self == .systemRoots }
}
