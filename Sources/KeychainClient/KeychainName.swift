public import FoundationEssentials
public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// A keychain as the `security` tool and `SecKeychainOpen` name it, resolved as macOS
/// resolves names, with Linux's directories (docs/ARCHITECTURE.md, "Keychains").
public enum KeychainName: Sendable, Hashable {
    /// The user's login keychain: `login`, `login.keychain[-db]`, the macOS path
    /// `~/Library/Keychains/login.keychain-db`, or its database path.
    case login
    /// The operating system's CA bundle, read-only: `SystemRootCertificates.keychain`,
    /// `/System/Library/Keychains/SystemRootCertificates.keychain`, or the bundle's path.
    case systemRoots
    /// The machine's keychain: `/Library/Keychains/System.keychain`.
    case system
    /// A file keychain, by absolute path.
    case file(String)

    /// macOS's path of the System Roots keychain.
    public static let systemRootsPath = "/System/Library/Keychains/SystemRootCertificates.keychain"
    /// macOS's path of the System keychain.
    public static let systemPath = "/Library/Keychains/System.keychain"
    /// Where the CA bundle is on Debian and on Fedora.
    static let caBundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]

    /// The directory bare names resolve in: `KEYCHAIN_HOME/keychains`.
    public static func directory(_ paths: KeychainPaths) -> String { paths.home + "/keychains" }

    /// Resolves `name`: a bare name (or a path under macOS's `~/Library/Keychains`) in the
    /// keychain directory, where `name` means `name-db` unless only `name` exists (macOS's
    /// rule, which fastlane relies on); a relative path against the working directory; an
    /// absolute path as given.
    public static func resolve(_ name: String, _ paths: KeychainPaths, environment: [String: String] = ProcessInfo.processInfo.environment) -> KeychainName {
        let macOSDirectory = (environment["HOME"] ?? "~") + "/Library/Keychains/"
        var bare: String?
        if !name.contains("/") {
            bare = name
        } else if name.hasPrefix(macOSDirectory), !name.dropFirst(macOSDirectory.count).contains("/") {
            bare = String(name.dropFirst(macOSDirectory.count))
        }
        if let bare {
            switch bare {
            case "login", "login.keychain", "login.keychain-db", KeychainPaths.databaseFileName: return .login
            case "SystemRootCertificates.keychain": return .systemRoots
            case "System.keychain": return .system
            default: break
            }
            let directory = directory(paths) + "/"
            if bare.hasSuffix("-db") || (exists(directory + bare) && !exists(directory + bare + "-db")) {
                return .file(directory + bare)
            }
            return .file(directory + bare + "-db")
        }
        if name == systemRootsPath || caBundles.contains(name) { return .systemRoots }
        if name == systemPath { return .system }
        let absolute = name.hasPrefix("/") ? name : currentDirectory() + "/" + name
        return absolute == paths.database ? .login : .file(absolute)
    }

    /// The path the keychain is listed under (`list-keychains`, `keychain:` in item dumps).
    public func path(_ paths: KeychainPaths) -> String {
        switch self {
        case .login: paths.database
        case .systemRoots: Self.systemRootsPath
        case .system: Self.systemPath
        case .file(let path): path
        }
    }

    /// The keychain a listed path names (the reverse of ``path(_:)``).
    public static func listed(_ path: String, _ paths: KeychainPaths) -> KeychainName {
        switch path {
        case paths.database: .login
        case systemRootsPath: .systemRoots
        case systemPath: .system
        default: .file(path)
        }
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
