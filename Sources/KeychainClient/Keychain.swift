import Dispatch
public import FoundationEssentials
public import KeychainModel
public import KeychainProtocol

/// A keychain as this process sees it: Trousseau's Swift API over securityd.
///
/// Two levels share one connection. The item level names items by their kind
/// (``GenericPassword``, ``InternetPassword``) and returns typed results; the query level
/// takes and returns the dictionaries of Apple's `SecItem` functions, and is what the
/// `Security` module is built on. Every call is one request to the daemon, which decides
/// from this process's code signature which access groups it may touch.
///
/// ```swift
/// let keychain = Keychain()
/// try keychain.set(Data("s3cret".utf8), for: GenericPassword(service: "api.example.com", account: "alice"))
/// let token = try await keychain.secret(for: GenericPassword(service: "api.example.com", account: "alice"))
/// ```
///
/// Every method throws `KeychainError` carrying Apple's OSStatus. The synchronous methods
/// block on the socket; the `async` ones run the same call off the cooperative thread pool.
public struct Keychain: Sendable {
    /// Where the keychain lives (`KEYCHAIN_HOME`, else `~/.local/share/trousseau`).
    public let paths: KeychainPaths
    private let connection: Connection
    /// The System keychain's securityd, for queries that name it (macOS's
    /// `/Library/Keychains/System.keychain` in `kSecUseKeychain` or `kSecMatchSearchList`).
    private let systemConnection: Connection

    /// The keychain at `paths`.
    ///
    /// - Parameters:
    ///   - paths: the keychain's home (`KEYCHAIN_HOME`, else the default).
    ///   - daemonEnvironment: variables added to the environment of a securityd this
    ///     process has to start (tests use it; applications need none).
    ///   - system: where the System keychain's securityd listens.
    public init(paths: KeychainPaths = .fromEnvironment(), daemonEnvironment: [String: String] = [:], system: KeychainPaths = .system()) {
        self.paths = paths
        self.connection = Connection(paths: paths, daemonEnvironment: daemonEnvironment)
        self.systemConnection = Connection(paths: system, daemonEnvironment: [:], system: true)
    }

    // MARK: - Query level (Apple's dictionaries)

    /// `SecItemAdd`: adds the item the attributes describe; returns what its `r_…` keys ask for.
    ///
    /// - Parameters:
    ///   - attributes: Apple's attribute dictionary, as `SecItemAdd` takes it.
    ///   - context: the authentication context for an access control that needs the
    ///     user (an application password); nil: a new one, used once.
    @discardableResult
    public func add(_ attributes: [String: KeychainValue], context: AuthenticationContext? = nil) throws(KeychainError) -> KeychainValue? {
        if attributes[QueryKey.useKeychain] == .string(KeychainName.systemPath) {
            return try systemConnection.call(Service.Add(attributes.filter { $0.key != QueryKey.useKeychain }), context: context)
        }
        return try connection.call(Service.Add(attributes), context: context)
    }

    /// Sends any request of securityd's catalog (the `SecKeychain` functions use the
    /// keychain-file requests this way).
    @discardableResult
    public func call<Request: ServiceRequest>(_ request: Request) throws(KeychainError) -> Request.Response {
        try connection.call(request, context: nil)
    }

    /// `SecItemCopyMatching`: data, attributes or persistent references of the matching
    /// items, one or an array as `m_Limit` asks. Reading the data of an item whose access
    /// control needs the user asks them, in `context`.
    public func copyMatching(_ query: [String: KeychainValue], context: AuthenticationContext? = nil) throws(KeychainError) -> KeychainValue? {
        let routes = SystemKeychainRoute.split(query)
        guard routes.count > 1 || routes.first?.system == true else {
            return try connection.call(Service.CopyMatching(query), context: context)
        }
        var search = KeychainSearch(query: query)
        try search.run(routes) { (route) throws(KeychainError) in
            try (route.system ? systemConnection : connection).call(Service.CopyMatching(route.query), context: context)
        }
        return try search.result()
    }

    /// `SecItemUpdate`: changes every matching item (asking the user, in `context`, for
    /// items whose access control needs them).
    public func update(
        _ query: [String: KeychainValue], with attributes: [String: KeychainValue], context: AuthenticationContext? = nil
    ) throws(KeychainError) {
        try KeychainSearch.changeEach(SystemKeychainRoute.split(query)) { (route) throws(KeychainError) in
            try (route.system ? systemConnection : connection).call(Service.Update(route.query, attributes: attributes), context: context)
        }
    }

    /// `SecItemDelete`: deletes every matching item.
    public func delete(_ query: [String: KeychainValue]) throws(KeychainError) {
        try KeychainSearch.changeEach(SystemKeychainRoute.split(query)) { (route) throws(KeychainError) in
            try (route.system ? systemConnection : connection).call(Service.Delete(route.query), context: nil)
        }
    }

    /// Evaluates a certificate chain in securityd (`SecTrustEvaluateWithError`).
    public func evaluateTrust(_ request: Service.EvaluateTrust) throws(KeychainError) -> Service.TrustEvaluation {
        try connection.call(request, context: nil)
    }

    /// Makes a P-256 key in the enclave; its blob (`EnclaveKeyBlob.data`).
    public func createEnclaveKey(protection: ProtectionClass, access: AccessControl?, context: AuthenticationContext?) throws(KeychainError) -> Data {
        try connection.call(Service.CreateEnclaveKey(protection: protection, access: access, context: nil), context: context).blob
    }

    /// Runs `operation` with an enclave key in the enclave, asking the user (in `context`)
    /// when its access control needs them.
    public func useEnclaveKey(
        _ blob: Data, _ operation: EnclaveKeyOperation, context: AuthenticationContext?, prompt: String?
    ) throws(KeychainError) -> SecretBytes {
        try connection.call(Service.UseEnclaveKey(blob: blob, operation: operation, context: nil, prompt: prompt), context: context).output
    }

    /// Opens a PKCS#12 file in securityd (`SecPKCS12Import`).
    public func decodePKCS12(_ request: Service.DecodePKCS12) throws(KeychainError) -> Service.PKCS12Contents {
        try connection.call(request, context: nil)
    }

    // MARK: - Authentication (what LAContext asks of the keychain)

    /// Proves `factors` (as many as `required`) in `context` for the next operation.
    public func prove(
        _ factors: [AccessControl.Factor], required: Int, in context: AuthenticationContext, prompt: String
    ) throws(KeychainError) {
        _ = try connection.withClient { try context.prove(factors, required: required, operation: nil, prompt: prompt, using: $0) }
    }

    /// Gives the enclave the application password of `context` (nil forgets it).
    public func setApplicationPassword(_ password: SecretBytes?, in context: AuthenticationContext) throws(KeychainError) {
        try connection.withClient { try context.setApplicationPassword(password, using: $0) }
    }

    /// Forgets everything proven in `context`.
    public func invalidate(_ context: AuthenticationContext) throws(KeychainError) {
        try connection.withClient { try context.invalidate(using: $0) }
    }

    /// What the enclave can check: passcode, sensor, enrollment.
    public func authenticationCapabilities() throws(KeychainError) -> AuthenticationCapabilities {
        try connection.withClient { try $0.authenticationCapabilities() }
    }
}

extension Keychain {
    /// The process's connection to securityd, made on first use (starting the daemon if
    /// none runs); ``KeychainClient`` reconnects when the daemon restarts.
    final class Connection: Sendable {
        private let paths: KeychainPaths
        private let daemonEnvironment: [String: String]
        /// The System keychain's daemon: connected to, never started.
        private let system: Bool
        private let client = BlockingMutex<KeychainClient?>(nil)

        init(paths: KeychainPaths, daemonEnvironment: [String: String], system: Bool = false) {
            self.paths = paths
            self.daemonEnvironment = daemonEnvironment
            self.system = system
        }

        @discardableResult
        func call<Request: ServiceRequest>(_ request: Request, context: AuthenticationContext?) throws(KeychainError) -> Request.Response {
            try withClient { try $0.call(request, in: context) }
        }

        /// Runs `body` with the connected client; any error becomes a `KeychainError`.
        func withClient<Result>(_ body: (KeychainClient) throws -> Result) throws(KeychainError) -> Result {
            do {
                return try body(connected())
            } catch let error as KeychainError {
                throw error
            } catch {
                throw KeychainError(status: OSStatusCode.internalComponent, message: "\(type(of: error))")
            }
        }

        private func connected() throws -> KeychainClient {
            try client.withLock { client in
                if let client { return client }
                let connected = system ? try KeychainClient.connectSystem(paths) : try KeychainClient.connect(paths, daemonEnvironment: daemonEnvironment)
                client = connected
                return connected
            }
        }
    }

    /// Runs a blocking call on a dispatch thread, keeping the cooperative pool free.
    static func offload<Result: Sendable>(_ body: @escaping @Sendable () throws(KeychainError) -> Result) async throws(KeychainError) -> Result {
        let outcome: Swift.Result<Result, KeychainError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(KeychainError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
