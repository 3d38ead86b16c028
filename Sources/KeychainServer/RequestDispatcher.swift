import CodeSigning
public import Enclave
import FoundationEssentials
import KeychainLogging
public import KeychainModel
import KeychainProtocol
import KeychainSystem
public import KeychainStore
public import KeychainCallers

/// Carries out one request frame for one caller: decodes it as the request of
/// ``ServiceCatalog`` its opcode names, checks the request's ``Authorization``, and runs its
/// handler (``ServedRequest``). Every failure becomes an OSStatus response.
public struct RequestDispatcher: Sendable {
    let store: KeychainStore
    let enclave: EnclaveClient
    let localRoot: LocalDeveloperRoot
    let trustSettings: TrustSettingsStore
    let profiles: ProfileStore
    let fileKeychains: FileKeychains
    let searchList: KeychainSearchList
    let scope: DaemonScope
    /// The Secret Service of a user's daemon (nil for the System keychain's).
    let secretService: SecretServiceFrontEnd?
    /// Sync between the user's devices (a user's keychain only).
    let sync: SyncService
    /// Recent refusals, for Keychain Access's activity view.
    let activity = SecurityActivity()

    /// - Parameters:
    ///   - home: the keychain's home, where the local developer root is trusted.
    ///   - adminTrustSettings: the administrator's trust settings file (tests name another).
    ///   - scope: a user's keychain, or the System keychain (``SystemKeychainPolicy``).
    /// - Throws: `errSecInternalComponent` when a request of the catalog has no handler
    ///   (a build that would refuse it at run time does not start).
    public init(
        store: KeychainStore, enclave: EnclaveClient, home: String, adminTrustSettings: String? = nil, scope: DaemonScope = .user,
        secretService: SecretServiceFrontEnd? = nil
    ) throws {
        self.store = store
        self.secretService = secretService
        secretService?.record(into: activity)
        self.scope = scope
        self.enclave = enclave
        self.localRoot = LocalDeveloperRoot(store: store, home: home)
        self.trustSettings = TrustSettingsStore(store: store, adminPath: adminTrustSettings ?? TrustSettingsStore.defaultAdminPath)
        self.profiles = ProfileStore(store: store, trustSettings: trustSettings, systemScope: scope != .user)
        self.fileKeychains = FileKeychains(enclave: enclave, directory: home + "/keychains")
        self.searchList = KeychainSearchList(home: home, loginPath: home + "/" + KeychainStore.databaseFileName)
        self.sync = SyncService(store: store, enclave: enclave, enabledHere: scope == .user)
        if let missing = Self.unservedRequests.first {
            throw KeychainError(status: OSStatusCode.internalComponent, message: "no handler for \(missing)")
        }
    }

    /// The trust settings evaluation honours: the user's, the administrator's, then the
    /// anchors of installed profiles' root payloads.
    func trustEvaluationSettings() -> [TrustSettingsRecord] {
        trustSettings.evaluationSettings() + profiles.anchorSettings()
    }

    /// Starts syncing in the background, a round every `interval` while sync is on.
    public func startSync(interval: Duration) {
        sync.startBackground(interval: interval)
    }

    /// How long a sync server's feed may stay short of this device's own write before
    /// `security sync status` warns of a stall.
    public func warnOfSyncStall(after seconds: Int) {
        sync.warnOfStall(after: TimeInterval(seconds))
    }

    /// Whether this keychain syncs (its daemon then stays up when idle, to hear hints).
    public var syncing: Bool { sync.listening }

    /// The machine is about to sleep: locks the file keychains set to lock on sleep.
    public func lockForSleep() {
        let locked = fileKeychains.lockForSleep()
        if !locked.isEmpty { DaemonLog.logger.info("going to sleep: locked \(locked.count) keychain(s) set to lock on sleep") }
    }

    /// The response frame to one request frame.
    ///
    /// - Throws: `errSecDecode` for a frame that is not a well-formed request (the
    ///   connection then ends); the request's own failures become failure responses.
    public func respond(to reader: inout ByteReader, from caller: Caller) throws -> ByteWriter {
        try Self.table.respond(to: &reader, in: (caller, self))
    }

    private typealias Table = RequestTable<ServiceWire, (caller: Caller, daemon: RequestDispatcher)>

    /// A handler per request of the catalog: the request's ``Authorization`` is checked
    /// before its own handler (``ServedRequest``) runs.
    private static let table = Table(serving: servedRequests.map { ($0, handler(for: $0)) })

    private static func handler<Request: ServedRequest>(for _: Request.Type) -> Table.Handler {
        Table.handler(Request.self) { request, presence, context in
            do {
                return try Request.handle(try context.daemon.authorize(request, from: context.caller, presence: presence), in: context.daemon)
            } catch let error as KeychainError {
                context.daemon.activity.record(String(describing: Request.self), caller: context.caller, status: error.status)
                throw error
            }
        }
    }

    /// The requests of the catalog without a handler (a test expects none).
    public static var unservedRequests: [any WireMessage.Type] { table.unserved }
}

/// A request securityd serves, and how: its handler gets the request only once its
/// ``Authorization`` has been checked.
protocol ServedRequest: ServiceRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response
}
