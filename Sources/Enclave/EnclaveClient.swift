import Dispatch
public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
public import Keybag

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's side of the enclave: a ``Keybag`` whose class keys live in the enclave
/// process, reached over a socketpair. Requests are serialized on the one connection.
public final class EnclaveClient: Keybag {
    private struct Connection: Sendable {
        var fd: Int32
        var process: pid_t?
        /// Set when the enclave stopped answering; the next request starts a new one.
        var broken = false
    }

    /// A blocking lock: requests wait their turn asleep while one round trip runs.
    private let connection: BlockingMutex<Connection>
    /// Metadata keys the enclave handed out, reused for a short while (ARCHITECTURE.md:
    /// "metadata keys … cached, dropped on lock"): without it every operation paid a round
    /// trip to the enclave, a third of an attribute lookup's time.
    private let metadataKeys = BlockingMutex(MetadataKeyCache())

    /// How long a metadata key is reused without asking the enclave. Anything that may
    /// lock or unlock a class drops them at once; this bounds how late an automatic lock
    /// (the enclave's timer, which securityd does not hear) hides class A attributes.
    static let metadataKeyLifetime: Duration = .seconds(1)
    /// Starts a new enclave process; nil for the in-process server.
    private let relaunch: (@Sendable () throws -> (fd: Int32, process: pid_t))?

    private init(fd: Int32, process: pid_t?, relaunch: (@Sendable () throws -> (fd: Int32, process: pid_t))?) {
        connection = BlockingMutex(Connection(fd: fd, process: process))
        self.relaunch = relaunch
    }

    deinit {
        connection.withLock { Self.end($0) }
    }

    /// Closes the connection (the enclave sees end of stream and exits) and reaps it.
    private static func end(_ connection: Connection) {
        close(connection.fd)
        if let process = connection.process {
            var status: Int32 = 0
            while waitpid(process, &status, 0) < 0, errno == EINTR {}
        }
    }

    /// The enclave executable: `$TROUSSEAU_ENCLAVE`, else `trousseau-enclave` beside this
    /// process's executable.
    public static var defaultExecutable: String {
        if let path = ProcessInfo.processInfo.environment["TROUSSEAU_ENCLAVE"], !path.isEmpty { return path }
        return ProcessExecutable.sibling("trousseau-enclave")
    }

    /// Starts an enclave process for the keychain in `home` and connects to it.
    ///
    /// - Parameters:
    ///   - unsafeFastPasscodeKDF: derive passcodes with scrypt N = 2^10 and no calibration.
    ///     **For tests only**: passcodes set this way resist guessing far less.
    /// - Throws: `errSecIO` when the process cannot be started.
    public static func launch(home: String, executable: String = defaultExecutable, unsafeFastPasscodeKDF: Bool = false) throws -> EnclaveClient {
        let start: @Sendable () throws -> (fd: Int32, process: pid_t) = {
            try spawn(home: home, executable: executable, unsafeFastPasscodeKDF: unsafeFastPasscodeKDF)
        }
        let (fd, process) = try start()
        return EnclaveClient(fd: fd, process: process, relaunch: start)
    }

    private static func spawn(home: String, executable: String, unsafeFastPasscodeKDF: Bool) throws -> (fd: Int32, process: pid_t) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "socketpair: \(String(cString: strerror(errno)))")
        }
        defer { close(fds[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 3 clears close-on-exec for the child's copy only (fds[1] is never 3:
        // 0-2 are open and socketpair returned two descriptors above them, or fds[1] > 3).
        posix_spawn_file_actions_adddup2(&actions, fds[1] == 3 ? fcntl(fds[1], F_DUPFD_CLOEXEC, 4) : fds[1], 3)

        var arguments = [executable, "--home", home]
        if unsafeFastPasscodeKDF { arguments.append("--unsafe-fast-kdf") }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else {
            close(fds[0])
            throw KeychainError(status: OSStatusCode.io, message: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return (fds[0], pid)
    }

    /// Serves `keybag` on a thread of this process over the same protocol and socketpair,
    /// for unit tests that want the protocol without a second process.
    public static func inProcess(_ keybag: SoftwareKeybag) throws -> EnclaveClient {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "socketpair: \(String(cString: strerror(errno)))")
        }
        let serverEnd = fds[1]
        DispatchQueue.global().async {
            EnclaveServer(keybag: keybag, memoryLocked: false).serve(fd: serverEnd)
            close(serverEnd)
        }
        return EnclaveClient(fd: fds[0], process: nil, relaunch: nil)
    }

    private func dropMetadataKeys() {
        metadataKeys.withLock { $0.drop() }
    }

    /// The enclave's process id, when it runs in its own process.
    public var processID: pid_t? { connection.withLock { $0.process } }

    /// Sends one request and returns the body of a successful response.
    ///
    /// When the enclave dies (killed, crashed), a request it never read goes to a new
    /// enclave — which, like a rebooted device, is before its first unlock when a passcode
    /// is set; a request it may have acted on fails, and the next one starts a new enclave.
    private func call(_ request: EnclaveRequest) throws -> ByteReader {
        var payload = EnclaveWire.encode(request)
        defer { payload.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        // Before and after: a key fetched while this request runs is not kept either.
        if request.mayChangeAvailableKeys { dropMetadataKeys() }
        defer { if request.mayChangeAvailableKeys { dropMetadataKeys() } }
        return try connection.withLock { connection in
            for _ in 0..<2 {
                if connection.broken, let relaunch {
                    let (fd, process) = try relaunch()
                    Self.end(connection)
                    connection = Connection(fd: fd, process: process)
                    dropMetadataKeys()  // a new enclave is a restarted device
                    Self.report("the enclave had exited; started a new one (pid \(process))")
                }
                let response: Data?
                do {
                    response = try FrameIO.exchange(payload, on: connection.fd, maximumSize: EnclaveWire.maximumFrameSize)
                } catch let error as KeychainError where error.status == OSStatusCode.io {
                    connection.broken = true
                    Self.report("the enclave connection failed: \(error.message)")
                    throw KeychainError(status: OSStatusCode.notAvailable, message: "the enclave exited during the request")
                }
                if let response { return try EnclaveWire.body(of: response) }
                connection.broken = true
                Self.report("the enclave exited")
            }
            throw KeychainError(status: OSStatusCode.notAvailable, message: "the enclave exited")
        }
    }

    /// A line on standard error (securityd's log).
    private static func report(_ line: String) {
        var text = "enclave client: \(line)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    private static func key(_ reader: inout ByteReader) throws -> SecretBytes {
        guard reader.remaining == 32 else { throw KeychainError.decode("malformed key in enclave response") }
        return SecretBytes(reader.rest())
    }

    // MARK: - Keybag

    public func indexKey() throws -> IndexKey {
        var body = try call(.indexKey)
        return try IndexKey(bytes: Self.key(&body))
    }

    public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        let now = ContinuousClock.now
        let (cached, generation) = metadataKeys.withLock { ($0.key(protection, at: now), $0.generation) }
        if let cached { return cached }
        var body = try call(.metadataKey(protection))
        let key = try MetadataKey(bytes: Self.key(&body))
        metadataKeys.withLock { $0.store(key, for: protection, until: now + Self.metadataKeyLifetime, ifStill: generation) }
        return key
    }

    public func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?) {
        var body = try call(.wrapItemKey(protection, itemKey, associatedData: associatedData, access: access, context: context))
        let wrapped = try body.lengthPrefixed(limit: EnclaveWire.fieldLimit)
        return (wrapped, try EnclaveWire.readAccess(&body).0)
    }

    public func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey {
        var body = try call(.unwrapItemKey(protection, wrapped: wrapped, associatedData: associatedData, access: access, context: context))
        return try ItemKey(bytes: Self.key(&body))
    }

    // MARK: - Authentication

    /// See ``SoftwareKeybag/authenticate(_:)``.
    public func authenticate(_ request: AuthenticationRequest) throws {
        _ = try call(.authenticate(request))
    }

    public func invalidateAuthentication(context: Data) throws {
        _ = try call(.invalidateAuthentication(context: context))
    }

    public func authenticationCapabilities() throws -> AuthenticationCapabilities {
        var body = try call(.authenticationCapabilities)
        return try AuthenticationCapabilities(from: &body)
    }

    // MARK: - Backups

    /// An open backup keybag in the enclave, known by its session id.
    public struct BackupSession: BackupKeys {
        let client: EnclaveClient
        let id: Data

        public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
            var body = try client.call(.backupMetadataKey(session: id, protection))
            return try MetadataKey(bytes: EnclaveClient.key(&body))
        }

        public func exportSecret(_ blob: Data, protection: ProtectionClass, rowAssociatedData: Data, recordAssociatedData: Data) throws -> Data {
            var body = try client.call(.exportSecret(
                session: id, protection, blob: blob, rowAssociatedData: rowAssociatedData, recordAssociatedData: recordAssociatedData))
            return Data(body.rest())
        }

        public func importSecret(_ blob: Data, protection: ProtectionClass, recordAssociatedData: Data, rowAssociatedData: Data) throws -> Data {
            var body = try client.call(.importSecret(
                session: id, protection, blob: blob, recordAssociatedData: recordAssociatedData, rowAssociatedData: rowAssociatedData))
            return Data(body.rest())
        }

        /// Drops the session's keys in the enclave.
        public func end() {
            _ = try? client.call(.endBackup(session: id))
        }
    }

    /// See ``SoftwareKeybag/beginBackup(password:passcode:)``.
    public func beginBackup(password: SecretBytes, passcode: SecretBytes?) throws -> (BackupSession, BackupArchive, BackupIntegrityKey) {
        var body = try call(.beginBackup(password: password, passcode: passcode))
        let id = try body.lengthPrefixed(limit: 64)
        let integrityKey = try BackupIntegrityKey(bytes: body.secret(limit: 32))
        let header = try BackupArchive(header: &body)
        return (BackupSession(client: self, id: id), header, integrityKey)
    }

    /// See ``SoftwareKeybag/openBackup(_:password:)``.
    public func openBackup(
        _ header: BackupArchive, password: SecretBytes
    ) throws -> (session: BackupSession, integrityKey: BackupIntegrityKey, sameDevice: Bool, classes: Set<ProtectionClass>) {
        var body = try call(.openBackup(header: header, password: password))
        let id = try body.lengthPrefixed(limit: 64)
        let integrityKey = try BackupIntegrityKey(bytes: body.secret(limit: 32))
        let sameDevice = try body.byte() == 1
        var classes: Set<ProtectionClass> = []
        for _ in 0..<Int(try body.byte()) { classes.insert(try EnclaveWire.protection(&body)) }
        return (BackupSession(client: self, id: id), integrityKey, sameDevice, classes)
    }

    // MARK: - Escrow

    /// See ``SoftwareKeybag/createEscrow(passcode:)``.
    public func createEscrow(passcode: SecretBytes?) throws -> (id: Data, secret: SecretBytes) {
        var body = try call(.createEscrow(passcode: passcode))
        let id = try body.lengthPrefixed(limit: 64)
        return (id, try body.secret(limit: 64))
    }

    /// See ``SoftwareKeybag/unlockWithEscrow(id:secret:)``.
    public func unlockWithEscrow(id: Data, secret: SecretBytes) throws {
        _ = try call(.unlockWithEscrow(id: id, secret: secret))
    }

    /// See ``SoftwareKeybag/revokeEscrow(id:)``.
    public func revokeEscrow(id: Data) throws {
        _ = try call(.revokeEscrow(id: id))
    }

    // MARK: - Lock state and passcode

    public func status() throws -> EnclaveStatus {
        var body = try call(.status)
        guard let lockState = LockState(rawValue: try body.byte()) else { throw KeychainError.decode("unknown lock state") }
        let hasPasscode = try body.byte() == 1
        let autoLock = try body.integer(UInt32.self)
        let failed = try body.integer(UInt32.self)
        let memoryLocked = try body.byte() == 1
        return EnclaveStatus(
            keybag: KeybagStatus(lockState: lockState, hasPasscode: hasPasscode, autoLockSeconds: autoLock, failedUnlocks: failed),
            memoryLocked: memoryLocked)
    }

    public func unlock(passcode: SecretBytes) throws {
        _ = try call(.unlock(passcode: passcode))
    }

    public func lock() throws {
        _ = try call(.lock)
    }

    /// See ``SoftwareKeybag/changePasscode(old:new:)``. Returns whether the akpu class key
    /// was destroyed (the caller purges those items).
    @discardableResult
    public func changePasscode(old: SecretBytes?, new: SecretBytes?) throws -> Bool {
        var body = try call(.changePasscode(old: old, new: new))
        return try body.byte() == 1
    }

    public func updateSettings(autoLockSeconds: UInt32? = nil, eraseAfterFailures: UInt32? = nil) throws {
        _ = try call(.updateSettings(autoLockSeconds: autoLockSeconds, eraseAfterFailures: eraseAfterFailures))
    }
}

/// The metadata keys securityd holds between operations, each with the time it expires.
private struct MetadataKeyCache: ~Copyable {
    private var keys: [ProtectionClass: (key: MetadataKey, expires: ContinuousClock.Instant)] = [:]
    /// Counts drops: a key fetched across a drop is not stored.
    private(set) var generation = 0

    func key(_ protection: ProtectionClass, at now: ContinuousClock.Instant) -> MetadataKey? {
        guard let entry = keys[protection], entry.expires > now else { return nil }
        return entry.key
    }

    mutating func store(_ key: MetadataKey, for protection: ProtectionClass, until expires: ContinuousClock.Instant, ifStill generation: Int) {
        guard generation == self.generation else { return }
        keys[protection] = (key, expires)
    }

    mutating func drop() {
        keys.removeAll()
        generation += 1
    }
}

extension EnclaveRequest {
    /// Whether the request may lock, unlock or remove a class key (so cached metadata
    /// keys must go).
    var mayChangeAvailableKeys: Bool {
        switch self {
        case .unlock, .lock, .changePasscode, .updateSettings, .authenticate, .unlockWithEscrow: true
        case .status, .indexKey, .metadataKey, .wrapItemKey, .unwrapItemKey, .invalidateAuthentication,
            .authenticationCapabilities, .beginBackup, .openBackup, .backupMetadataKey, .exportSecret, .importSecret,
            .endBackup, .createEscrow, .revokeEscrow:
            false
        }
    }
}
