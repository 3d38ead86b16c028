import Dispatch
public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
public import EnclaveProtocol
import KeychainSystem

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
        if let process = connection.process { SystemCall.wait(process) }
    }

    /// How securityd starts the enclave: which executable, and the test hooks it passes
    /// (test builds only). The enclave gets these arguments and no environment of ours.
    public struct Launch: Sendable {
        /// `trousseau-enclave` beside securityd's executable.
        public var executable = ProcessExecutable.sibling("trousseau-enclave")
        /// `TROUSSEAU_TPM`: where a new keychain's device key goes (the enclave's `--tpm`).
        public var deviceKeyBackend: String?
        #if TROUSSEAU_TEST_HOOKS
        /// Derive passcodes with scrypt N = 2^10 and no calibration (test builds only).
        public var unsafeFastPasscodeKDF = false
        /// Trust the scripted sensor in this directory (test builds only).
        public var testSensor: String?
        /// Derive enclave keys from this seed and their ids, so that a leak test knows
        /// what to look for (test builds only).
        public var testEnclaveKeySeed: String?
        #endif

        public init() {}

        /// The arguments after the executable.
        var arguments: [String] {
            var arguments: [String] = []
            if let deviceKeyBackend { arguments += ["--tpm", deviceKeyBackend] }
            #if TROUSSEAU_TEST_HOOKS
            if unsafeFastPasscodeKDF { arguments.append("--unsafe-fast-kdf") }
            if let testSensor { arguments += ["--test-sensor", testSensor] }
            if let testEnclaveKeySeed { arguments += ["--test-enclave-key-seed", testEnclaveKeySeed] }
            #endif
            return arguments
        }
    }

    /// Starts an enclave process for the keychain in `home` and connects to it.
    ///
    /// - Throws: `errSecIO` when the process cannot be started.
    public static func launch(home: String, _ launch: Launch = Launch()) throws -> EnclaveClient {
        let start: @Sendable () throws -> (fd: Int32, process: pid_t) = {
            let (ours, theirs) = try UnixSocket.pair()
            defer { close(theirs) }
            do {
                // Nothing of securityd's environment: the enclave needs none, and a client
                // that started securityd must not be able to configure the class keys' keeper.
                let pid = try Spawn.process(
                    launch.executable, arguments: ["--home", home] + launch.arguments, environment: Spawn.sanitizerEnvironment(),
                    descriptors: Spawn.Descriptors(descriptor3: theirs))
                return (ours, pid)
            } catch {
                close(ours)
                throw error
            }
        }
        let (fd, process) = try start()
        return EnclaveClient(fd: fd, process: process, relaunch: start)
    }

    /// Speaks the enclave protocol over `fd`, a socket whose other end an enclave server
    /// answers (tests serve one in-process; securityd uses ``launch(home:_:)``).
    package static func connected(to fd: Int32) -> EnclaveClient {
        EnclaveClient(fd: fd, process: nil, relaunch: nil)
    }

    private func dropMetadataKeys() {
        metadataKeys.withLock { $0.drop() }
    }

    /// The enclave's process id, when it runs in its own process.
    public var processID: pid_t? { connection.withLock { $0.process } }

    /// Sends one request and returns its response.
    ///
    /// When the enclave dies (killed, crashed), a request it never read goes to a new
    /// enclave — which, like a rebooted device, is before its first unlock when a passcode
    /// is set; a request it may have acted on fails, and the next one starts a new enclave.
    @discardableResult
    func call<Request: EnclaveRequest>(_ request: Request) throws -> Request.Response {
        var payload = EnclaveWire.encode(request)
        defer { payload.zero() }
        // Before and after: a key fetched while this request runs is not kept either.
        if Request.mayChangeAvailableKeys { dropMetadataKeys() }
        defer { if Request.mayChangeAvailableKeys { dropMetadataKeys() } }
        let response = try connection.withLock { connection -> SecretBytes in
            for _ in 0..<2 {
                if connection.broken, let relaunch {
                    let (fd, process) = try relaunch()
                    Self.end(connection)
                    connection = Connection(fd: fd, process: process)
                    dropMetadataKeys()  // a new enclave is a restarted device
                    Self.report("the enclave had exited; started a new one (pid \(process))")
                }
                let response: SecretBytes?
                do {
                    // Not zeroed yet: an unread request is sent again to the next enclave.
                    response = try FrameIO.exchange(&payload, on: connection.fd, maximumSize: EnclaveWire.maximumFrameSize, zeroing: false)
                } catch let error as KeychainError where error.status == OSStatusCode.io {
                    connection.broken = true
                    Self.report("the enclave connection failed: \(error.message)")
                    throw KeychainError(status: OSStatusCode.notAvailable, message: "the enclave exited during the request")
                }
                if let response { return response }
                connection.broken = true
                Self.report("the enclave exited")
            }
            throw KeychainError(status: OSStatusCode.notAvailable, message: "the enclave exited")
        }
        var reader = ByteReader(response)
        return try EnclaveWire.decodeResponse(&reader, to: Request.self)
    }

    /// A line on standard error (securityd's log).
    private static func report(_ line: String) {
        var text = "enclave client: \(line)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    // MARK: - Keybag

    public func indexKey() throws -> IndexKey {
        try IndexKey(bytes: call(EnclaveCall.IndexKey()).bytes)
    }

    public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        try metadataKey(for: protection, keychain: nil)
    }

    /// Whether `keychain` is unlocked: "yes" from the cache while it lasts, else `ask`.
    func fileKeychainUnlocked(_ keychain: UUID, ask: () throws -> Bool) throws -> Bool {
        let now = ContinuousClock.now
        let (cached, generation) = metadataKeys.withLock { ($0.isUnlocked(keychain, at: now), $0.generation) }
        if cached { return true }
        let unlocked = try ask()
        if unlocked { metadataKeys.withLock { $0.storeUnlocked(keychain, until: now + Self.metadataKeyLifetime, ifStill: generation) } }
        return unlocked
    }

    /// The login keychain's (nil) or a file keychain's metadata key for `protection`,
    /// cached for ``metadataKeyLifetime`` as the login keychain's are.
    func metadataKey(for protection: ProtectionClass, keychain: UUID?) throws -> MetadataKey {
        let now = ContinuousClock.now
        let slot = MetadataKeyCache.Slot(keychain: keychain, protection: protection)
        let (cached, generation) = metadataKeys.withLock { ($0.key(slot, at: now), $0.generation) }
        if let cached { return cached }
        let key = try MetadataKey(bytes: call(EnclaveCall.MetadataKey(protection, keychain: keychain)).bytes)
        metadataKeys.withLock { $0.store(key, for: slot, until: now + Self.metadataKeyLifetime, ifStill: generation) }
        return key
    }

    public func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?) {
        let response = try call(EnclaveCall.WrapItemKey(protection, itemKey, associatedData: associatedData, access: access, context: context))
        return (response.wrapped, response.access)
    }

    public func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey {
        try ItemKey(bytes: call(EnclaveCall.UnwrapItemKey(
            protection, wrapped: wrapped, associatedData: associatedData, access: access, context: context)).bytes)
    }

    // MARK: - Enclave keys

    /// A new P-256 key made in the enclave: ``EnclaveKeyBlob/data``.
    public func createEnclaveKey(protection: ProtectionClass, access: AccessControl?, context: Data?) throws -> Data {
        try call(EnclaveCall.CreateEnclaveKey(protection: protection, access: access, context: context)).blob
    }

    /// Runs `operation` with an enclave key, in the enclave.
    public func useEnclaveKey(_ blob: Data, _ operation: EnclaveKeyOperation, context: Data?) throws -> SecretBytes {
        try call(EnclaveCall.UseEnclaveKey(blob: blob, operation: operation, context: context)).output
    }

    // MARK: - Authentication

    /// Evidence of the user's presence for a context, checked by the enclave.
    public func authenticate(_ request: AuthenticationRequest) throws {
        try call(EnclaveCall.Authenticate(request))
    }

    public func invalidateAuthentication(context: Data) throws {
        try call(EnclaveCall.InvalidateAuthentication(context: context))
    }

    public func authenticationCapabilities() throws -> AuthenticationCapabilities {
        try call(EnclaveCall.AuthenticationCapabilities())
    }

    // MARK: - Backups

    /// An open backup keybag in the enclave, known by its session id.
    public struct BackupSession: BackupKeys {
        let client: EnclaveClient
        let id: Data

        public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
            try MetadataKey(bytes: client.call(EnclaveCall.BackupMetadataKey(session: id, protection)).bytes)
        }

        public func exportSecret(_ blob: Data, protection: ProtectionClass, rowAssociatedData: Data, recordAssociatedData: Data) throws -> Data {
            try client.call(EnclaveCall.ExportSecret(
                session: id, protection, blob: blob, rowAssociatedData: rowAssociatedData, recordAssociatedData: recordAssociatedData)).bytes
        }

        public func importSecret(_ blob: Data, protection: ProtectionClass, recordAssociatedData: Data, rowAssociatedData: Data) throws -> Data {
            try client.call(EnclaveCall.ImportSecret(
                session: id, protection, blob: blob, recordAssociatedData: recordAssociatedData, rowAssociatedData: rowAssociatedData)).bytes
        }

        /// Drops the session's keys in the enclave.
        public func end() {
            _ = try? client.call(EnclaveCall.EndBackup(session: id))
        }
    }

    /// A new backup keybag: its session, the archive's header and its integrity key.
    public func beginBackup(password: SecretBytes, passcode: SecretBytes?) throws -> (BackupSession, BackupArchive, BackupIntegrityKey) {
        let response = try call(EnclaveCall.BeginBackup(password: password, passcode: passcode))
        return (BackupSession(client: self, id: response.session), response.header, try BackupIntegrityKey(bytes: response.integrityKey))
    }

    /// Opens an archive's backup keybag.
    public func openBackup(
        _ header: BackupArchive, password: SecretBytes
    ) throws -> (session: BackupSession, integrityKey: BackupIntegrityKey, sameDevice: Bool, classes: Set<ProtectionClass>) {
        let response = try call(EnclaveCall.OpenBackup(header: header, password: password))
        return (BackupSession(client: self, id: response.session), try BackupIntegrityKey(bytes: response.integrityKey),
                response.sameDevice, response.classes)
    }

    // MARK: - Escrow

    /// An escrow keybag of the class C keys: its id and the agent's secret.
    public func createEscrow(passcode: SecretBytes?) throws -> (id: Data, secret: SecretBytes) {
        let response = try call(EnclaveCall.CreateEscrow(passcode: passcode))
        return (response.id, response.secret)
    }

    /// Makes class C available with an escrow keybag's secret.
    public func unlockWithEscrow(id: Data, secret: SecretBytes) throws {
        try call(EnclaveCall.UnlockWithEscrow(id: id, secret: secret))
    }

    /// Revokes an escrow keybag.
    public func revokeEscrow(id: Data) throws {
        try call(EnclaveCall.RevokeEscrow(id: id))
    }

    // MARK: - Lock state and passcode

    public func status() throws -> EnclaveStatus {
        try call(EnclaveCall.Status())
    }

    public func unlock(passcode: SecretBytes) throws {
        try call(EnclaveCall.Unlock(passcode: passcode))
    }

    public func lock() throws {
        try call(EnclaveCall.Lock())
    }

    /// Sets, changes or removes the passcode. Returns whether the akpu class key was
    /// destroyed (the caller purges those items).
    @discardableResult
    public func changePasscode(old: SecretBytes?, new: SecretBytes?) throws -> Bool {
        try call(EnclaveCall.ChangePasscode(old: old, new: new))
    }

    /// Moves the device key into a TPM; the status after it.
    public func migrateToTPM(tcti: String?, passcode: SecretBytes?) throws -> EnclaveStatus {
        try call(EnclaveCall.MigrateToTPM(tcti: tcti, passcode: passcode))
    }

    public func updateSettings(autoLockSeconds: UInt32? = nil, eraseAfterFailures: UInt32? = nil) throws {
        try call(EnclaveCall.UpdateSettings(autoLockSeconds: autoLockSeconds, eraseAfterFailures: eraseAfterFailures))
    }
}

/// The metadata keys securityd holds between operations, each with the time it expires.
private struct MetadataKeyCache: ~Copyable {
    /// A class of the login keychain (no keychain) or of a file keychain.
    struct Slot: Hashable {
        var keychain: UUID?
        var protection: ProtectionClass
    }

    private var keys: [Slot: (key: MetadataKey, expires: ContinuousClock.Instant)] = [:]
    /// File keychains seen unlocked, until when that answer stands.
    private var unlocked: [UUID: ContinuousClock.Instant] = [:]
    /// Counts drops: a key fetched across a drop is not stored.
    private(set) var generation = 0

    func key(_ slot: Slot, at now: ContinuousClock.Instant) -> MetadataKey? {
        guard let entry = keys[slot], entry.expires > now else { return nil }
        return entry.key
    }

    mutating func store(_ key: MetadataKey, for slot: Slot, until expires: ContinuousClock.Instant, ifStill generation: Int) {
        guard generation == self.generation else { return }
        keys[slot] = (key, expires)
    }

    func isUnlocked(_ keychain: UUID, at now: ContinuousClock.Instant) -> Bool {
        unlocked[keychain].map { $0 > now } ?? false
    }

    mutating func storeUnlocked(_ keychain: UUID, until expires: ContinuousClock.Instant, ifStill generation: Int) {
        guard generation == self.generation else { return }
        unlocked[keychain] = expires
    }

    mutating func drop() {
        keys.removeAll()
        unlocked.removeAll()
        generation += 1
    }
}
