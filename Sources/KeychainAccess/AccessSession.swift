import FoundationEssentials
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Who may use this window: whoever holds the one-time launch token first, and then only
/// the browser it gave the session cookie to. Jupyter's pattern (docs/SECURITY.md, "Keychain
/// Access"): the token reaches the browser through a file only the user can read, is
/// exchanged once for an HttpOnly, SameSite=Strict cookie, and is forgotten.
public final class AccessSession: Sendable {
    private let listeningPort = BlockingMutex(0)
    /// The session cookie's value, 256 random bits.
    let cookie: String
    /// The synchronizer token every state-changing request carries (a form field or the
    /// `X-CSRF-Token` header), 256 random bits.
    let csrf: String
    /// This run's name, 128 random bits, which the page and every `/live` message carry: a
    /// page reloads only for a message of the run that served it, never for a server that
    /// took the port after this one stopped.
    let run: String
    private let launchToken: BlockingMutex<String?>
    /// The redirect file, removed once its token is used.
    private let redirectFile = BlockingMutex<String?>(nil)

    /// The name of the session cookie.
    static let cookieName = "keychain-access"

    public init() {
        cookie = Self.randomToken()
        csrf = Self.randomToken()
        run = String(Self.randomToken().prefix(32))
        launchToken = BlockingMutex(Self.randomToken())
    }

    /// The port the window listens on (127.0.0.1 only); 0 until it listens.
    public var port: Int { listeningPort.withLock { $0 } }

    /// Records the port the server was given (no request can come before).
    public func listening(on port: Int) { listeningPort.withLock { $0 = port } }

    /// The one-time token, until it is used.
    public var pendingToken: String? { launchToken.withLock { $0 } }

    /// The address that opens the window once.
    public func launchURL(token: String) -> String { "http://127.0.0.1:\(port)/login?token=\(token)" }

    /// Takes the launch token: true once, for the right token; the token is forgotten then.
    func redeem(_ presented: Substring) -> Bool {
        launchToken.withLock { token in
            guard let expected = token, Self.constantTimeEqual(Array(presented.utf8), Array(expected.utf8)) else { return false }
            token = nil
            if let file = redirectFile.withLock({ $0 }) { unlink(file) }
            return true
        }
    }

    /// The `Host` headers this window answers: its own address, by number or as localhost.
    /// Anything else is a name that resolved here by DNS rebinding, or a proxy: 421.
    func isOwnHost(_ host: String) -> Bool {
        let port = self.port
        return port != 0 && (host == "127.0.0.1:\(port)" || host == "localhost:\(port)")
    }

    /// The origins a state-changing request may come from: the page's own.
    func isOwnOrigin(_ origin: String) -> Bool {
        let port = self.port
        return port != 0 && (origin == "http://127.0.0.1:\(port)" || origin == "http://localhost:\(port)")
    }

    func isSessionCookie(_ value: String?) -> Bool {
        guard let value else { return false }
        return Self.constantTimeEqual(Array(value.utf8), Array(cookie.utf8))
    }

    func isCSRFToken(_ value: String?) -> Bool {
        guard let value else { return false }
        return Self.constantTimeEqual(Array(value.utf8), Array(csrf.utf8))
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// 32 bytes from the system's generator (getrandom), as 64 hexadecimal digits.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hexadecimal.string((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Writes the page that forwards the browser to the launch URL: a file of this user's
    /// alone (0600, in a 0700 directory), so the token never appears in a command line
    /// other users can read (`/proc/PID/cmdline` of the browser).
    ///
    /// - Returns: the file's path.
    public func writeRedirectFile(in directory: String, token: String) throws -> String {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw KeychainError(status: .io, message: "cannot make \(directory): \(String(cString: strerror(errno)))")
        }
        // Another user may have made it first (a /tmp fallback): it must be ours, ours alone,
        // and not a link elsewhere.
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw KeychainError(status: .io, message: "\(directory) is not a directory of this user's alone")
        }
        let path = directory + "/keychain-access-\(getpid()).html"
        let url = launchURL(token: token)
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(url)">
            <title>Keychain Access</title></head>
            <body><p><a href="\(url)">Open Keychain Access</a></p></body></html>

            """
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw KeychainError(status: .io, message: "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(page.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw KeychainError(status: .io, message: "cannot write \(path)")
        }
        redirectFile.withLock { $0 = path }
        return path
    }
}
