import FoundationEssentials
public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Why securityd could not start, left for the client that started it.
///
/// A daemon that cannot open its keychain (a read-only or full `KEYCHAIN_HOME`, a
/// damaged keybag) exits at once; its standard error goes nowhere. It writes its OSStatus
/// and message beside its socket instead (the runtime directory stays writable when the
/// home is not), and the client that started it throws that error rather than starting
/// daemons until its timeout. The message names paths and system errors, never secrets.
public struct DaemonStartFailure: Sendable, Equatable {
    public let status: OSStatusCode
    public let message: String

    public init(status: OSStatusCode, message: String) {
        self.status = status
        self.message = message
    }

    /// The file for the keychain at `paths`: beside its socket.
    public static func path(_ paths: KeychainPaths) -> String { paths.socket + ".failed" }

    /// Writes the report (0600), creating the socket directory (0700) if needed.
    public func record(for paths: KeychainPaths) {
        _ = mkdir(paths.socketDirectory, 0o700)
        let fd = open(Self.path(paths), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var text = "\(status.rawValue)\n\(message)"
        text.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
    }

    /// The report a daemon of `paths` left, if any.
    public static func read(for paths: KeychainPaths) -> DaemonStartFailure? {
        let fd = open(path(paths), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &bytes, bytes.count)
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        guard let newline = text.firstIndex(of: "\n"), let status = Int32(text[..<newline]) else { return nil }
        return DaemonStartFailure(status: OSStatusCode(rawValue: status), message: String(text[text.index(after: newline)...]))
    }

    /// Removes the report (a daemon that started, or a client about to start one).
    public static func clear(for paths: KeychainPaths) {
        unlink(path(paths))
    }
}
