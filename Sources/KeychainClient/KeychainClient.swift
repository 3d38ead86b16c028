import Dispatch
import FoundationEssentials
public import KeychainModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A connection to securityd, the daemon that owns the keychain: SecItem calls and
/// keychain calls over framed requests on a Unix socket. When no daemon listens, the
/// client starts one and waits for it.
public final class KeychainClient: Sendable {
    private let connection: Mutex<Int32>

    private init(fd: Int32) {
        connection = Mutex(fd)
    }

    deinit {
        _ = connection.withLock { close($0) }
    }

    /// The daemon executable: `$TROUSSEAU_SECURITYD`, else `securityd` beside this
    /// process's executable.
    public static var defaultDaemon: String {
        if let path = ProcessInfo.processInfo.environment["TROUSSEAU_SECURITYD"], !path.isEmpty { return path }
        return ProcessExecutable.sibling("securityd")
    }

    /// Connects to the daemon of the keychain at `paths`, starting it when nobody listens.
    ///
    /// - Throws: `errSecNotAvailable` when no daemon answers within `timeout`.
    ///
    /// - Parameter daemonEnvironment: variables to add to this process's environment for a
    ///   daemon started here.
    public static func connect(
        _ paths: KeychainPaths = .fromEnvironment(), daemon: String = defaultDaemon,
        daemonEnvironment: [String: String] = [:], timeout: Duration = .seconds(10)
    ) throws -> KeychainClient {
        if let fd = try attempt(paths.socket) { return KeychainClient(fd: fd) }
        try startDaemon(daemon, home: paths.home, environment: daemonEnvironment)
        let deadline = ContinuousClock.now + timeout
        var pause: UInt32 = 1_000
        while ContinuousClock.now < deadline {
            usleep(pause)
            pause = min(pause * 2, 50_000)
            if let fd = try attempt(paths.socket) { return KeychainClient(fd: fd) }
        }
        throw KeychainError(status: OSStatusCode.notAvailable, message: "securityd did not start (\(daemon))")
    }

    /// One connection attempt: nil when nobody listens yet.
    private static func attempt(_ path: String) throws -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(status: OSStatusCode.io, message: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw KeychainError.param("socket path longer than 107 bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected == 0 { return fd }
        let reason = errno
        close(fd)
        guard reason == ENOENT || reason == ECONNREFUSED || reason == EAGAIN else {
            throw KeychainError(status: OSStatusCode.io, message: "connect \(path): \(String(cString: strerror(reason)))")
        }
        return nil
    }

    /// Starts the daemon in a session of its own, its standard streams on /dev/null.
    /// Several clients may do this at once: all but one daemon find the lock taken and exit.
    private static func startDaemon(_ daemon: String, home: String, environment: [String: String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID, hidden behind _GNU_SOURCE
        let words: [String] = [daemon, "--home", home]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, daemon, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw KeychainError(status: OSStatusCode.notAvailable, message: "cannot start \(daemon): \(String(cString: strerror(result)))")
        }
        // Reap it if it exits while we live (a second instance exits at once); a daemon
        // that outlives us is reparented.
        let child = pid
        DispatchQueue.global(qos: .background).async {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
        }
    }

    /// Sends a request and waits for its response.
    ///
    /// - Throws: the daemon's OSStatus, or `errSecIO` when the connection breaks.
    @discardableResult
    public func call(_ request: ServiceRequest) throws -> KeychainValue? {
        var payload = ServiceWire.encode(request)
        defer { payload.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        // securityd would drop the connection on a frame this large; say why instead.
        guard payload.count <= ServiceWire.maximumFrameSize else {
            throw KeychainError(status: OSStatusCode.dataTooLarge, message: "the request is larger than \(ServiceWire.maximumFrameSize) bytes")
        }
        let response = try connection.withLock { fd -> ServiceResponse in
            try FrameIO.write(payload, to: fd)
            guard let frame = try FrameIO.read(from: fd, maximumSize: ServiceWire.maximumFrameSize) else {
                throw KeychainError(status: OSStatusCode.io, message: "securityd closed the connection")
            }
            return try ServiceWire.decodeResponse(frame)
        }
        return try response.get()
    }

    // MARK: - SecItem

    /// `SecItemAdd`.
    public func add(_ query: [String: KeychainValue]) throws -> KeychainValue? {
        try call(.add(query))
    }

    /// `SecItemCopyMatching`.
    public func copyMatching(_ query: [String: KeychainValue]) throws -> KeychainValue? {
        try call(.copyMatching(query))
    }

    /// `SecItemUpdate`.
    public func update(_ query: [String: KeychainValue], attributes: [String: KeychainValue]) throws {
        try call(.update(query, attributes: attributes))
    }

    /// `SecItemDelete`.
    public func delete(_ query: [String: KeychainValue]) throws {
        try call(.delete(query))
    }
}
