public import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where a keychain lives: its home (data) and the socket of its securityd.
public struct KeychainPaths: Sendable, Hashable {
    /// `KEYCHAIN_HOME`: the database, keybag, device key and daemon lock.
    public let home: String
    /// The daemon's Unix socket, in a 0700 directory under the runtime directory: the
    /// user's default keychain's is `default.sock` (what the systemd socket unit listens
    /// on); any other's is named by a hash of `home`, so that any `home`, however long,
    /// fits the 107-byte limit.
    public let socket: String

    public static let databaseFileName = "keychain.db"

    /// The paths from the environment: `KEYCHAIN_HOME`, else `$XDG_DATA_HOME/trousseau`,
    /// else `~/.local/share/trousseau`; sockets under `$XDG_RUNTIME_DIR/trousseau`, else
    /// `/tmp/trousseau-UID`.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> KeychainPaths {
        let home: String
        if let explicit = environment["KEYCHAIN_HOME"], !explicit.isEmpty {
            home = explicit
        } else {
            home = defaultHome(environment)
        }
        return KeychainPaths(home: home, environment: environment)
    }

    /// The user's default keychain: `$XDG_DATA_HOME/trousseau`, else `~/.local/share/trousseau`.
    public static func defaultHome(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/trousseau" }
        return (environment["HOME"] ?? "/tmp") + "/.local/share/trousseau"
    }

    /// The socket file name of the default keychain.
    public static let defaultSocketName = "default.sock"

    public init(home: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.home = home
        let runtime =
            environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 + "/trousseau" } ?? "/tmp/trousseau-\(getuid())"
        let name = home == Self.defaultHome(environment) ? Self.defaultSocketName : Self.fingerprint(home) + ".sock"
        socket = runtime + "/" + name
    }

    /// A keychain whose socket is not derived from its home: the System keychain's.
    public init(home: String, socket: String) {
        self.home = home
        self.socket = socket
    }

    /// Where the System keychain's home is: the system's state directory.
    public static let systemHome = "/var/lib/trousseau/system"
    /// Where the System keychain's securityd listens (mode 0666: every user may ask it).
    public static let systemSocket = "/run/trousseau/system.sock"

    /// The System keychain, the machine's (docs/ARCHITECTURE.md, "The System keychain"):
    /// ``systemHome`` and ``systemSocket``, or `TROUSSEAU_SYSTEM_HOME` and
    /// `TROUSSEAU_SYSTEM_SOCKET` where a test or a second installation puts them.
    public static func system(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> KeychainPaths {
        KeychainPaths(
            home: environment["TROUSSEAU_SYSTEM_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? systemHome,
            socket: environment["TROUSSEAU_SYSTEM_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? systemSocket)
    }

    public var database: String { home + "/" + Self.databaseFileName }
    public var socketDirectory: String { String(socket[..<socket.lastIndex(of: "/")!]) }  // socket always has a directory

    /// FNV-1a 64 of the home path, in hex: a name, not a secret.
    static func fingerprint(_ path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
