import FoundationEssentials
public import KeychainModel
public import SyncProtocol

/// What securityd asks of the sync agent, one frame each (``FrameIO``).
public enum SyncAgentRequest: Sendable {
    /// One HTTP request; answered by ``SyncAgentEvent/answered(_:_:)`` or ``SyncAgentEvent/failed(_:_:)`` with its id.
    case exchange(UInt32, SyncHTTPRequest)
    /// Keep the server's change-hint socket at `url` open with this `Authorization`, and
    /// report each hint (``SyncAgentEvent/hint(_:)``); replaces an earlier socket.
    case listen(url: String, authorization: SecretBytes)
}

/// What the sync agent tells securityd, one frame each.
public enum SyncAgentEvent: Sendable {
    /// The answer to the exchange with this id.
    case answered(UInt32, SyncHTTPResponse)
    /// The exchange with this id failed (``SyncHTTPExchange/exchange(_:)``'s errors).
    case failed(UInt32, KeychainError)
    /// A change hint from the server (or ``ChangeHint/subscribed``).
    case hint(ChangeHint)
}

/// The frames between securityd and the sync agent: a kind byte, then its fields
/// (big-endian integers, 32-bit-length-prefixed strings and bytes). Both sides are ours and
/// started together, so there is no version; each side still decodes strictly.
public enum SyncAgentWire {
    /// The largest frame: an answer of the largest size, with room for its fields.
    public static let maximumFrameSize = SyncHTTPResponse.maximumBody + 4096

    static let shortField = 16 << 10

    public static func encode(_ request: SyncAgentRequest) -> ByteWriter {
        var writer = ByteWriter()
        switch request {
        case .exchange(let id, let request):
            writer.append(1)
            writer.appendInteger(id)
            writer.appendLengthPrefixed(request.method)
            writer.appendLengthPrefixed(request.url)
            writer.appendSecret(request.authorization)
            writer.appendOptional(request.body) { body, writer in writer.appendLengthPrefixed(body) }
        case .listen(let url, let authorization):
            writer.append(2)
            writer.appendLengthPrefixed(url)
            writer.appendSecret(authorization)
        }
        return writer
    }

    public static func decodeRequest(_ reader: inout ByteReader) throws -> SyncAgentRequest {
        let request: SyncAgentRequest
        switch try reader.byte() {
        case 1:
            let id = try reader.integer(UInt32.self)
            let method = try reader.string(limit: 16)
            let url = try reader.string(limit: shortField)
            let authorization = try reader.secret(limit: shortField)
            let body = try reader.optional { try $0.lengthPrefixed(limit: SyncHTTPResponse.maximumBody) }
            request = .exchange(id, SyncHTTPRequest(method: method, url: url, authorization: authorization, body: body))
        case 2:
            request = .listen(url: try reader.string(limit: shortField), authorization: try reader.secret(limit: shortField))
        case let kind:
            throw KeychainError.decode("no sync agent request has kind \(kind)")
        }
        try reader.expectEnd("a sync agent request")
        return request
    }

    public static func encode(_ event: SyncAgentEvent) -> ByteWriter {
        var writer = ByteWriter()
        switch event {
        case .answered(let id, let response):
            writer.append(1)
            writer.appendInteger(id)
            writer.appendInteger(UInt16(clamping: response.status))
            writer.appendLengthPrefixed(response.body)
        case .failed(let id, let error):
            writer.append(2)
            writer.appendInteger(id)
            writer.appendInteger(error.status.rawValue)
            writer.appendLengthPrefixed(String(error.message.prefix(1000)))
        case .hint(let hint):
            writer.append(3)
            writer.appendOptional(hint.zone) { zone, writer in writer.appendLengthPrefixed(zone.rawValue) }
            writer.appendInteger(hint.seq)
        }
        return writer
    }

    public static func decodeEvent(_ reader: inout ByteReader) throws -> SyncAgentEvent {
        let event: SyncAgentEvent
        switch try reader.byte() {
        case 1:
            let id = try reader.integer(UInt32.self)
            let status = Int(try reader.integer(UInt16.self))
            event = .answered(id, SyncHTTPResponse(status: status, body: try reader.lengthPrefixed(limit: SyncHTTPResponse.maximumBody)))
        case 2:
            let id = try reader.integer(UInt32.self)
            let status = OSStatusCode(rawValue: try reader.integer(Int32.self))
            event = .failed(id, KeychainError(status: status, message: try reader.string(limit: shortField)))
        case 3:
            let zone = try reader.optional { reader in
                guard let zone = SyncIdentifier(try reader.string(limit: shortField)) else { throw KeychainError.decode("a hint's zone is not an identifier") }
                return zone
            }
            event = .hint(ChangeHint(zone: zone, seq: try reader.integer(Int64.self)))
        case let kind:
            throw KeychainError.decode("no sync agent event has kind \(kind)")
        }
        try reader.expectEnd("a sync agent event")
        return event
    }
}
