import Dispatch
import FoundationEssentials
public import KeychainModel
public import KeychainProtocol
internal import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// A connection to securityd, the daemon that owns the keychain: SecItem calls and
/// keychain calls over framed requests on a Unix socket. When no daemon listens, the
/// client starts one and waits for it.
///
/// When the daemon goes away (it exited idle, was stopped, or crashed), a request it never
/// read goes to the next daemon, which the client starts; a request it may have applied is
/// never sent twice: that call fails with errSecIO and the next one reconnects.
public final class KeychainClient: Sendable {
    private let endpoint: Endpoint
    /// The connected socket; -1 once the daemon is gone, until the next call reconnects.
    /// Threads sharing the client wait their turn asleep while one round trip runs.
    private let connection: BlockingMutex<Int32>

    private init(endpoint: Endpoint, fd: Int32) {
        self.endpoint = endpoint
        connection = BlockingMutex(fd)
    }

    deinit {
        _ = connection.withLock { $0 >= 0 ? close($0) : 0 }
    }

    /// The daemon executable: the first of `InstallationLayout.daemonCandidates(environment:)`
    /// that exists (`$TROUSSEAU_SECURITYD`, beside this program, the installation's
    /// libexec); the first candidate when none does (connecting then says what to install).
    public static var defaultDaemon: String {
        InstallationLayout.installedDaemon() ?? InstallationLayout.daemonCandidates().first ?? "securityd"
    }

    /// Connects to the daemon of the keychain at `paths`, starting it when nobody listens.
    ///
    /// - Throws: `errSecNotAvailable` when no daemon answers within `timeout`.
    ///
    /// - Parameters:
    ///   - paths: the keychain's home.
    ///   - daemon: the securityd to start when nobody listens.
    ///   - daemonEnvironment: variables to add to this process's environment for a
    ///     daemon started here.
    ///   - timeout: how long to wait for the daemon to answer.
    public static func connect(
        _ paths: KeychainPaths = .fromEnvironment(), daemon: String = defaultDaemon,
        daemonEnvironment: [String: String] = [:], timeout: Duration = .seconds(10)
    ) throws -> KeychainClient {
        let endpoint = Endpoint(paths: paths, daemon: daemon, daemonEnvironment: daemonEnvironment, timeout: timeout)
        return KeychainClient(endpoint: endpoint, fd: try endpoint.open())
    }

    /// Connects to the System keychain's securityd (`KeychainPaths.system(_:)`), which a
    /// system unit runs as root; a client never starts it.
    ///
    /// - Throws: `errSecNotAvailable` when it is not running.
    public static func connectSystem(_ paths: KeychainPaths = .system()) throws -> KeychainClient {
        let endpoint = Endpoint(paths: paths, daemon: "", daemonEnvironment: [:], timeout: .zero, autostart: false)
        return KeychainClient(endpoint: endpoint, fd: try endpoint.open())
    }

    /// Sends a request and waits for its response.
    ///
    /// - Parameters:
    ///   - request: the request, which names its response type.
    ///   - presence: the keychain passcode, sent as the user's presence (requests
    ///     whose `Authorization` asks for it, and the tool reaching other groups' items).
    /// - Throws: the daemon's OSStatus, or `errSecIO` when the connection broke after the
    ///   daemon read the request.
    @discardableResult
    public func call<Request: ServiceRequest>(_ request: Request, presence: SecretBytes? = nil) throws -> Request.Response {
        var payload = ServiceWire.encode(request, presence: presence)
        defer { payload.zero() }
        // securityd would drop the connection on a frame this large; say why instead.
        guard payload.bytes.count <= ServiceWire.maximumFrameSize else {
            throw KeychainError(status: OSStatusCode.dataTooLarge, message: "the request is larger than \(ServiceWire.maximumFrameSize) bytes")
        }
        let frame = try connection.withLock { fd -> SecretBytes in
            // A few tries: a daemon that refuses the connection (stopping, full) is followed by another.
            for _ in 0..<3 {
                if fd < 0 { fd = try endpoint.open() }
                let frame: SecretBytes?
                do {
                    // Not zeroed yet: a request the daemon never read goes to the next one.
                    frame = try FrameIO.exchange(&payload, on: fd, maximumSize: ServiceWire.maximumFrameSize, zeroing: false)
                } catch {
                    close(fd)
                    fd = -1
                    throw error
                }
                if let frame { return frame }
                close(fd)  // the daemon went away without reading the request
                fd = -1
            }
            throw KeychainError(status: OSStatusCode.io, message: "securityd closed the connection unread three times")
        }
        var reader = ByteReader(frame)
        return try ServiceWire.decodeResponse(&reader, to: Request.self)
    }

    // MARK: - SecItem

    /// `SecItemAdd`.
    public func add(_ query: [String: KeychainValue]) throws -> KeychainValue? {
        try call(Service.Add(query))
    }

    /// `SecItemCopyMatching`.
    public func copyMatching(_ query: [String: KeychainValue]) throws -> KeychainValue? {
        try call(Service.CopyMatching(query))
    }

    /// `SecItemUpdate`.
    public func update(_ query: [String: KeychainValue], attributes: [String: KeychainValue]) throws {
        try call(Service.Update(query, attributes: attributes))
    }

    /// `SecItemDelete`.
    public func delete(_ query: [String: KeychainValue]) throws {
        try call(Service.Delete(query))
    }
}
