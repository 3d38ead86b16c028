public import FoundationEssentials
public import KeychainModel

/// One HTTP request to the sync server, as a device's client makes it.
public struct SyncHTTPRequest: Sendable {
    public var method: String
    /// The whole URL: the server's, a path and a query.
    public var url: String
    /// The `Authorization` header's value (it holds the device's credential).
    public var authorization: SecretBytes
    /// A JSON body, or nil for none.
    public var body: Data?

    public init(method: String, url: String, authorization: SecretBytes, body: Data?) {
        self.method = method
        self.url = url
        self.authorization = authorization
        self.body = body
    }
}

/// The server's answer: its status and its body (at most ``SyncHTTPResponse/maximumBody``).
public struct SyncHTTPResponse: Sendable, Equatable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }

    /// The longest answer read (a feed page of the largest records, with room).
    public static let maximumBody = 64 << 20
}

/// Sends HTTP requests to the sync server. securityd's goes through the sync agent
/// (`trousseau-sync-agent`, the only process of the keychain's that speaks TCP or TLS); the
/// agent's, a benchmark's and a test's is AsyncHTTPClient in process.
public protocol SyncHTTPExchange: Sendable {
    /// The answer, whatever its status.
    ///
    /// - Throws: `errSecDecode` for an answer longer than ``SyncHTTPResponse/maximumBody``;
    ///   `errSecNotAvailable` when the server cannot be reached or did not answer in time.
    func exchange(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse
}
