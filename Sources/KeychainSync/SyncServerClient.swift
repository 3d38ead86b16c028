public import FoundationEssentials
public import KeychainModel
public import SyncProtocol
public import SyncTransport

/// trousseau-syncd's HTTP API as a device calls it (`/v1/...`, JSON bodies of
/// `SyncProtocol`), with the device's bearer credential. Answers are bounded and decoded
/// strictly; a failure is a ``KeychainError`` that names the server's own message, never
/// a body's bytes. The bytes travel through `http`: in securityd, the sync agent.
public struct SyncServerClient: SyncZoneTransport {
    public let server: URL
    let credential: SecretBytes
    /// `Bearer` for a member's credential, `Pairing` for a new device's pairing token.
    let scheme: String
    let http: any SyncHTTPExchange

    /// - Throws: `errSecParam` for a URL that is not `https://`, or `http://` to a loopback
    ///   host, or that carries a user name, password, query or fragment.
    public init(server: String, credential: SecretBytes, http: any SyncHTTPExchange) throws {
        self.server = try Self.checkedURL(server)
        self.credential = credential
        self.scheme = "Bearer"
        self.http = http
    }

    /// A new device's client during a join, before it is a member: its requests carry the
    /// pairing token it claimed the pairing with.
    public init(server: String, pairingToken: SecretBytes, http: any SyncHTTPExchange) throws {
        self.server = try Self.checkedURL(server)
        self.credential = pairingToken
        self.scheme = "Pairing"
        self.http = http
    }

    /// The `Authorization` header's value for `credential` under `scheme`.
    public static func authorization(_ credential: SecretBytes, scheme: String = "Bearer") -> SecretBytes {
        var header = Array((scheme + " ").utf8) + credential.withUnsafeBytes { Data($0) }.base64EncodedString().utf8
        defer { header.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        return SecretBytes(header)
    }

    /// The server URL as sync keeps it, checked (see ``init(server:credential:http:)``).
    public static func checkedURL(_ text: String) throws -> URL {
        try SyncServerURL.checked(text)
    }

    // MARK: Accounts and the circle

    /// Opens an account whose first device is `device` with this client's credential.
    public func registerAccount(_ account: SyncIdentifier, device: SyncIdentifier) async throws {
        let body = RegisterAccountRequest(account: account, device: device, token: credential.withUnsafeBytes { Data($0) })
        _ = try await send("POST", "/v1/accounts", body: body, expecting: [201])
    }

    /// Registers another device's credential in this device's account.
    public func registerDevice(_ device: SyncIdentifier, token: Data) async throws {
        _ = try await send("POST", "/v1/devices", body: RegisterDeviceRequest(device: device, token: token), expecting: [201])
    }

    /// Forgets `device`'s credential on the server (a device this one removed from the circle).
    public func revokeDevice(_ device: SyncIdentifier) async throws {
        _ = try await send("DELETE", "/v1/devices/\(device)", body: nil as Data?, expecting: [204])
    }

    /// The account's membership entries after `after` (-1: all), read page by page while the
    /// server says more follow.
    ///
    /// - Throws: `errSecDecode` when a page that says more follow does not move past the one
    ///   before, or the pages run past any chain a server keeps (twice
    ///   ``SyncLimits/membershipChain``): a server leading the device round in circles.
    public func membership(after: Int64) async throws -> [MembershipEntry] {
        var entries: [MembershipEntry] = []
        var cursor = after
        while true {
            let path = "/v1/membership?after=\(cursor)&limit=\(SyncLimits.membershipPage)"
            let page = try decode(MembershipResponse.self, try await send("GET", path, body: nil as Data?, expecting: [200]).body)
            entries += page.entries
            guard page.more else { return entries }
            guard let last = page.entries.last, last.index > cursor, entries.count < 2 * SyncLimits.membershipChain else {
                throw KeychainError.decode("the sync server's device list does not end: its pages do not move on")
            }
            cursor = last.index
        }
    }

    /// Appends a membership entry at its index (the chain's length on the server).
    public func appendMembership(_ entry: MembershipEntry) async throws {
        _ = try await send("POST", "/v1/membership", body: entry, expecting: [201])
    }

    // MARK: The pairing mailbox

    /// Opens a pairing (a member): its nameplate, the code's first part, and its id.
    public func openPairing() async throws -> PairingOpened {
        try decode(PairingOpened.self, try await send("POST", "/v1/pairings", body: nil as Data?, expecting: [201]).body)
    }

    /// Claims the pairing `nameplate` names with this client's pairing token (a new device): its id.
    public func claimPairing(_ nameplate: Int64) async throws -> PairingClaimed {
        let claim = PairingClaim(token: credential.withUnsafeBytes { Data($0) })
        return try decode(PairingClaimed.self, try await send("POST", "/v1/pairings/\(nameplate)/claim", body: claim, expecting: [200]).body)
    }

    /// Posts one message to the other side.
    public func postPairingMessage(_ nameplate: Int64, _ body: Data) async throws {
        _ = try await send("POST", "/v1/pairings/\(nameplate)/messages", body: PairingPost(body: body), expecting: [201])
    }

    /// The other side's messages after index `after` (-1: all).
    public func pairingMessages(_ nameplate: Int64, after: Int64) async throws -> [PairingMessage] {
        try decode(PairingMessages.self, try await send("GET", "/v1/pairings/\(nameplate)/messages?after=\(after)", body: nil as Data?, expecting: [200]).body).messages
    }

    /// Closes the pairing: its code is dead.
    public func closePairing(_ nameplate: Int64) async throws {
        _ = try await send("DELETE", "/v1/pairings/\(nameplate)", body: nil as Data?, expecting: [204])
    }

    // MARK: SyncZoneTransport

    public func apply(_ writes: [SyncRecord], zone: SyncIdentifier) async throws -> [Int64] {
        let answer = try await send("POST", "/v1/zones/\(zone)/batch", body: BatchRequest(writes: writes), expecting: [200, 409])
        if answer.status == 409 { throw try decode(BatchConflict.self, answer.body) }
        return try decode(BatchResponse.self, answer.body).seqs
    }

    public func changes(zone: SyncIdentifier, after: Int64, limit: Int) async throws -> ChangesResponse {
        try decode(ChangesResponse.self, try await send("GET", "/v1/zones/\(zone)/changes?after=\(after)&limit=\(limit)", body: nil as Data?, expecting: [200]).body)
    }

    // MARK: HTTP

    private func send<Body: Encodable>(_ method: String, _ path: String, body: Body?, expecting: Set<Int>) async throws -> (status: Int, body: Data) {
        let request = SyncHTTPRequest(
            method: method, url: server.absoluteString + path, authorization: Self.authorization(credential, scheme: scheme),
            body: try body.map { try JSONEncoder().encode($0) })
        let answer: SyncHTTPResponse
        do {
            answer = try await http.exchange(request)
        } catch let error as KeychainError where error.status == OSStatusCode.decode {
            throw error
        } catch {
            throw KeychainError(status: OSStatusCode.notAvailable, message: "the sync server \(server.host ?? "") cannot be reached (\(method) \(Self.route(path)))")
        }
        let (status, data) = (answer.status, answer.body)
        guard expecting.contains(status) else {
            // The server's own words, printable ASCII only: they reach a log and a terminal.
            let message = (try? JSONDecoder().decode(SyncErrorBody.self, from: data)).map {
                String(String.UnicodeScalarView($0.message.unicodeScalars.prefix(300).filter { (0x20..<0x7f).contains($0.value) }))
            } ?? "HTTP \(status)"
            let code = status == 401 || status == 403 ? OSStatusCode.authFailed : status == 404 ? OSStatusCode.itemNotFound : OSStatusCode.io
            throw KeychainError(status: code, message: "the sync server refused \(method) \(Self.route(path)): \(message)")
        }
        return (status, data)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw KeychainError.decode("the sync server's answer is not a \(type)")
        }
    }

    /// A path without its query, for messages.
    private static func route(_ path: String) -> String { String(path.prefix { $0 != "?" }) }
}
