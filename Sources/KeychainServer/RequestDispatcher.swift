import CodeSigning
public import Enclave
import FoundationEssentials
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
        self.scope = scope
        self.enclave = enclave
        self.localRoot = LocalDeveloperRoot(store: store, home: home)
        self.trustSettings = TrustSettingsStore(store: store, adminPath: adminTrustSettings ?? TrustSettingsStore.defaultAdminPath)
        self.profiles = ProfileStore(store: store, trustSettings: trustSettings, systemScope: scope != .user)
        self.fileKeychains = FileKeychains(enclave: enclave, directory: home + "/keychains")
        self.searchList = KeychainSearchList(home: home, loginPath: home + "/" + KeychainStore.databaseFileName)
        if let missing = Self.unservedRequests.first {
            throw KeychainError(status: OSStatusCode.internalComponent, message: "no handler for \(missing)")
        }
    }

    /// The trust settings evaluation honours: the user's, the administrator's, then the
    /// anchors of installed profiles' root payloads.
    func trustEvaluationSettings() -> [TrustSettingsRecord] {
        trustSettings.evaluationSettings() + profiles.anchorSettings()
    }

    /// The machine is about to sleep: locks the file keychains set to lock on sleep.
    public func lockForSleep() {
        let locked = fileKeychains.lockForSleep()
        if !locked.isEmpty { DaemonLog.write("going to sleep: locked \(locked.count) keychain(s) set to lock on sleep") }
    }

    /// The response frame to one request frame.
    ///
    /// - Throws: `errSecDecode` for a frame that is not a well-formed request (the
    ///   connection then ends); the request's own failures become failure responses.
    public func respond(to reader: inout ByteReader, from caller: Caller) throws -> ByteWriter {
        let header = try ServiceWire.header(&reader)
        guard let entry = Self.entries[header.opcode] else { throw KeychainError.decode("unknown request") }
        return try entry(&reader, header.presence, caller, self)
    }

    private typealias Entry = @Sendable (inout ByteReader, SecretBytes?, Caller, RequestDispatcher) throws -> ByteWriter

    /// One entry per request of the catalog that has a handler.
    private static let entries: [UInt8: Entry] = {
        var table: [UInt8: Entry] = [:]
        for type in ServiceCatalog.requests {
            if let served = type as? any ServedRequest.Type { table[type.opcode] = entry(served) }
        }
        return table
    }()

    /// The requests of the catalog without a handler (a test expects none).
    public static var unservedRequests: [any ServiceRequest.Type] {
        ServiceCatalog.requests.filter { entries[$0.opcode] == nil }
    }

    private static func entry<Request: ServedRequest>(_: Request.Type) -> Entry {
        { reader, presence, caller, dispatcher in
            let request = try Request(from: &reader)
            try reader.expectEnd("request")
            do {
                let authorized = try dispatcher.authorize(request, from: caller, presence: presence)
                return ServiceWire.success(try Request.handle(authorized, in: dispatcher))
            } catch let error as KeychainError {
                return ServiceWire.failure(error)
            } catch {
                return ServiceWire.failure(KeychainError.internalComponent)
            }
        }
    }
}

/// A request securityd serves, and how: its handler gets the request only once its
/// ``Authorization`` has been checked.
protocol ServedRequest: ServiceRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response
}
