public import FoundationEssentials
import KeychainModel

/// The sync server's URL as a device keeps it.
public enum SyncServerURL {
    /// `text` checked: `https://`, or `http://` to a loopback address, with no user name,
    /// password, query or fragment; without a trailing slash.
    ///
    /// - Throws: `errSecParam` naming what is wrong.
    public static func checked(_ text: String) throws -> URL {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty else {
            throw KeychainError.param("the sync server is a URL such as https://sync.example.org")
        }
        guard components.user == nil, components.password == nil else {
            throw KeychainError.param("the sync server's URL must not carry a user name or password: devices sign in with their own credential")
        }
        guard components.query == nil, components.fragment == nil else { throw KeychainError.param("the sync server's URL takes no query or fragment") }
        // Loopback by address, not by a name that merely starts like one ("127.example.org").
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        let ipv4Loopback = octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
        let loopback = host == "localhost" || host == "::1" || host == "[::1]" || ipv4Loopback
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw KeychainError.param("the sync server must be https:// (plain http:// only on this machine's loopback)")
        }
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let url = URL(string: trimmed) else { throw KeychainError.param("the sync server is a URL such as https://sync.example.org") }
        return url
    }

    /// The server's change-hint socket (`ws://` or `wss://`).
    public static func notify(_ server: URL) -> String {
        server.absoluteString + "/v1/notify"
    }
}
