import Crypto
import Foundation
import Hummingbird
import HummingbirdWebSocket
import SyncProtocol

/// The request context of trousseau-syncd: JSON bodies no larger than ``SyncLimits/requestBody``.
public struct SyncRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<SyncRequestContext>

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
    }

    public var maxUploadSize: Int { SyncLimits.requestBody }
}

extension BatchResponse: ResponseEncodable {}
extension ChangesResponse: ResponseEncodable {}
extension MembershipResponse: ResponseEncodable {}
extension PairingOpened: ResponseEncodable {}
extension PairingClaimed: ResponseEncodable {}
extension PairingMessages: ResponseEncodable {}

/// trousseau-syncd's HTTP API over a ``SyncStore``. Every route takes a device's bearer
/// credential but account registration and a joining device's pairing calls (its claim, then
/// the pairing token it claimed with); a device reaches only its own account's rows.
public struct SyncRoutes: Sendable {
    public let store: any SyncStore
    /// Whether anyone who reaches the server may open an account (`--open-registration`).
    public let openRegistration: Bool
    public let quota: SyncQuota

    public init(store: any SyncStore, openRegistration: Bool, quota: SyncQuota = .standard) {
        self.store = store
        self.openRegistration = openRegistration
        self.quota = quota
    }

    public func router() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        let v1 = router.group("v1")
        v1.post("accounts") { request, context in try await registerAccount(request, context) }
        v1.post("devices") { request, context in try await registerDevice(request, context) }
        v1.delete("devices/:device") { request, context in try await revokeDevice(request, context) }
        v1.post("zones/:zone/batch") { request, context in try await batch(request, context) }
        v1.get("zones/:zone/changes") { request, context in try await changes(request, context) }
        v1.get("membership") { request, context in try await membership(request, context) }
        v1.post("membership") { request, context in try await appendMembership(request, context) }
        v1.post("pairings") { request, context in try await openPairing(request, context) }
        v1.post("pairings/:nameplate/claim") { request, context in try await claimPairing(request, context) }
        v1.post("pairings/:nameplate/messages") { request, context in try await postPairingMessage(request, context) }
        v1.get("pairings/:nameplate/messages") { request, context in try await pairingMessages(request, context) }
        v1.delete("pairings/:nameplate") { request, context in try await closePairing(request, context) }
        // Reached only when the WebSocket router declined the upgrade.
        v1.get("notify") { request, _ -> Response in
            _ = try await authenticate(request)
            throw SyncHTTPError(.upgradeRequired, "upgrade", "/v1/notify is a WebSocket")
        }
        return router
    }

    /// The routes that upgrade to a WebSocket: `GET /v1/notify`, ``ChangeHint/subscribed`` and
    /// then the account's ``ChangeHint``s as JSON text messages until the device closes. A
    /// request without a valid credential is not upgraded and gets the HTTP route's 401.
    public func webSocketRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.ws("v1/notify") { request, _ in
            _ = try await authenticate(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            try await notify(inbound, outbound, context.request)
        }
        return router
    }

    // MARK: Handlers

    func registerAccount(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        guard openRegistration else {
            throw SyncHTTPError(.forbidden, "registration", "this server does not open accounts (start it with --open-registration)")
        }
        let body = try await request.decode(as: RegisterAccountRequest.self, context: context)
        try await SyncHTTPError.mapping {
            try await store.registerAccount(body.account, device: body.device, tokenHash: try Self.tokenHash(body.token), quota: quota)
        }
        return Response(status: .created)
    }

    func registerDevice(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let caller = try await authenticate(request)
        let body = try await request.decode(as: RegisterDeviceRequest.self, context: context)
        try await SyncHTTPError.mapping {
            try await store.registerDevice(body.device, account: caller.account, tokenHash: try Self.tokenHash(body.token))
        }
        return Response(status: .created)
    }

    /// A device of the account forgets another's credential (or its own): the member that
    /// removed it from the circle (the chain, which the server cannot read, says who may).
    func revokeDevice(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let caller = try await authenticate(request)
        guard let device = context.parameters.get("device").flatMap(SyncIdentifier.init) else {
            throw SyncHTTPError(.badRequest, "invalid", "not a device id")
        }
        try await SyncHTTPError.mapping { try await store.revokeDevice(device, account: caller.account) }
        return Response(status: .noContent)
    }

    func batch(_ request: Request, _ context: SyncRequestContext) async throws -> BatchResponse {
        let caller = try await authenticate(request)
        let zone = try Self.zone(context)
        let body = try await request.decode(as: BatchRequest.self, context: context)
        return try await SyncHTTPError.mapping {
            BatchResponse(seqs: try await store.apply(body.writes, account: caller.account, zone: zone))
        }
    }

    func changes(_ request: Request, _ context: SyncRequestContext) async throws -> ChangesResponse {
        let caller = try await authenticate(request)
        let zone = try Self.zone(context)
        let query = request.uri.queryParameters
        let after = try Self.number(query["after"], name: "after", default: 0)
        let limit = try Self.number(query["limit"], name: "limit", default: Int64(SyncLimits.changesPage))
        return try await SyncHTTPError.mapping {
            try await store.changes(account: caller.account, zone: zone, after: after, limit: Int(clamping: limit))
        }
    }

    /// One page of the chain (``SyncLimits/membershipPage`` entries at most): a long chain is
    /// never one answer, and a device reads on while `more`.
    func membership(_ request: Request, _ context: SyncRequestContext) async throws -> MembershipResponse {
        let caller = try await authenticate(request)
        let query = request.uri.queryParameters
        let after = try Self.number(query["after"], name: "after", default: -1)
        let limit = try Self.number(query["limit"], name: "limit", default: Int64(SyncLimits.membershipPage))
        return try await SyncHTTPError.mapping {
            try await store.membership(account: caller.account, after: after, limit: Int(clamping: limit))
        }
    }

    func appendMembership(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let caller = try await authenticate(request)
        let body = try await request.decode(as: MembershipEntry.self, context: context)
        try await SyncHTTPError.mapping { try await store.appendMembership(body, account: caller.account) }
        return Response(status: .created)
    }

    func notify(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, _ request: Request) async throws {
        let caller = try await authenticate(request)
        guard let hints = store.hints.subscribe(account: caller.account) else {
            try await outbound.close(.policyViolation, reason: "too many open sockets for this account")
            return
        }
        let encoder = JSONEncoder()
        try await outbound.writeTextMessage(String(decoding: try encoder.encode(ChangeHint.subscribed), as: UTF8.self))
        try await withThrowingTaskGroup { group in
            group.addTask {
                // The device sends nothing but control frames; the loop ends when it closes.
                for try await _ in inbound {}
            }
            group.addTask {
                for await hint in hints {
                    try await outbound.writeTextMessage(String(decoding: try encoder.encode(hint), as: UTF8.self))
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    // MARK: Pairing

    func openPairing(_ request: Request, _ context: SyncRequestContext) async throws -> EditedResponse<PairingOpened> {
        let caller = try await authenticate(request)
        let pairing = SyncIdentifier(UUID().uuidString)!  // 122 random bits, from the system's generator
        let opened = try await SyncHTTPError.mapping {
            try await store.openPairing(account: caller.account, device: caller.device, pairing: pairing, now: Self.now())
        }
        return EditedResponse(status: .created, response: opened)
    }

    func claimPairing(_ request: Request, _ context: SyncRequestContext) async throws -> PairingClaimed {
        let nameplate = try Self.nameplate(context)
        let body = try await request.decode(as: PairingClaim.self, context: context)
        return try await SyncHTTPError.mapping {
            try await store.claimPairing(nameplate: nameplate, tokenHash: try Self.tokenHash(body.token), now: Self.now())
        }
    }

    func postPairingMessage(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let party = try await pairingParty(request)
        let nameplate = try Self.nameplate(context)
        let body = try await request.decode(as: PairingPost.self, context: context)
        _ = try await SyncHTTPError.mapping {
            try await store.postPairingMessage(nameplate: nameplate, party: party, body: body.body, now: Self.now())
        }
        return Response(status: .created)
    }

    func pairingMessages(_ request: Request, _ context: SyncRequestContext) async throws -> PairingMessages {
        let party = try await pairingParty(request)
        let nameplate = try Self.nameplate(context)
        let after = try Self.number(request.uri.queryParameters["after"], name: "after", default: -1)
        return try await SyncHTTPError.mapping {
            try await store.pairingMessages(nameplate: nameplate, party: party, after: after, now: Self.now())
        }
    }

    func closePairing(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let party = try await pairingParty(request)
        let nameplate = try Self.nameplate(context)
        try await SyncHTTPError.mapping { try await store.closePairing(nameplate: nameplate, party: party, now: Self.now()) }
        return Response(status: .noContent)
    }

    /// A member (`Bearer` credential) or the new device that claimed the pairing
    /// (`Pairing` token).
    func pairingParty(_ request: Request) async throws -> PairingParty {
        if let header = request.headers[.authorization], header.hasPrefix("Pairing ") {
            guard let token = Data(base64Encoded: String(header.dropFirst("Pairing ".count))) else {
                throw SyncHTTPError(.unauthorized, "unauthorized", "a pairing token is base64")
            }
            return .newDevice(tokenHash: try Self.tokenHash(token))
        }
        return .member(try await authenticate(request))
    }

    static func nameplate(_ context: SyncRequestContext) throws -> Int64 {
        guard let raw = context.parameters.get("nameplate"), let nameplate = Int64(raw), (1...Int64(SyncLimits.pairings)).contains(nameplate) else {
            throw SyncHTTPError(.badRequest, "invalid", "a pairing is named by its number, 1 to \(SyncLimits.pairings)")
        }
        return nameplate
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    // MARK: Arguments

    /// The device whose credential the request carries (`Authorization: Bearer <base64>`).
    /// A header that cannot hold a credential is refused before the store is asked: only a
    /// well-formed one costs a database read, so a flood of malformed ones queues nothing
    /// behind the store's one connection.
    func authenticate(_ request: Request) async throws -> AuthenticatedDevice {
        guard let hash = Self.bearerTokenHash(request.headers[.authorization]) else {
            throw SyncHTTPError(.unauthorized, "unauthorized", "a device credential is needed (Authorization: Bearer, 32 to 64 bytes in base64)")
        }
        guard let device = try await store.device(tokenHash: hash) else {
            throw SyncHTTPError(.unauthorized, "unauthorized", "the credential names no device of this server")
        }
        return device
    }

    /// The hash of the credential an `Authorization` header carries, or nil when it cannot
    /// carry one: no `Bearer`, not base64, not 32 to 64 bytes. Pure: no store, no I/O. The
    /// length is checked before decoding (base64 of 32 to 64 bytes is 44 to 88 characters),
    /// so a long header is not decoded at all.
    static func bearerTokenHash(_ header: String?) -> Data? {
        let scheme = "Bearer "
        guard let header, header.hasPrefix(scheme) else { return nil }
        let encoded = header.utf8.dropFirst(scheme.utf8.count)
        guard (44...88).contains(encoded.count), let token = Data(base64Encoded: String(decoding: encoded, as: UTF8.self)) else { return nil }
        return try? tokenHash(token)
    }

    /// What the server keeps of a device's credential. Credentials are random (32 to 64
    /// bytes), so one hash suffices; a stolen database yields no credential.
    static func tokenHash(_ token: Data) throws -> Data {
        guard (32...64).contains(token.count) else {
            throw SyncHTTPError(.badRequest, "invalid", "a device credential is 32 to 64 random bytes")
        }
        return Data(SHA256.hash(data: token))
    }

    static func zone(_ context: SyncRequestContext) throws -> SyncIdentifier {
        guard let raw = context.parameters.get("zone"), let zone = SyncIdentifier(raw) else {
            throw SyncHTTPError(.badRequest, "invalid", "a zone is named by 1 to 64 of A-Z a-z 0-9 - _")
        }
        return zone
    }

    static func number(_ raw: Substring?, name: String, default value: Int64) throws -> Int64 {
        guard let raw else { return value }
        guard let number = Int64(raw), number >= -1 else {
            throw SyncHTTPError(.badRequest, "invalid", "\(name) is a whole number")
        }
        return number
    }
}
