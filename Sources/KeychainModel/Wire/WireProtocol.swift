/// A request of one of the binary protocols (a client's to securityd, securityd's to the
/// enclave), with its response. Its fields and its response are in ``WireEncoder``'s form;
/// its opcode is its protocol's (``MessageCatalog``), so that one message may belong to
/// both protocols — securityd forwards to the enclave the request it authorized.
public protocol WireMessage: WireCodable {
    /// What a success carries; most requests answer with nothing.
    associatedtype Response: WireCodable = NoResult
}

/// A protocol's requests by opcode, each once.
public struct MessageCatalog: Sendable {
    private let types: [UInt8: any WireMessage.Type]
    private let opcodes: [ObjectIdentifier: UInt8]
    /// Every opcode and its request, by opcode.
    public let requests: [(opcode: UInt8, type: any WireMessage.Type)]

    /// - Precondition: every opcode and every type is listed once (a programmer's error,
    ///   caught when the catalog is first used).
    public init(_ entries: KeyValuePairs<UInt8, any WireMessage.Type>) {
        types = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        opcodes = Dictionary(uniqueKeysWithValues: entries.map { (ObjectIdentifier($0.value), $0.key) })
        requests = entries.map { (opcode: $0.key, type: $0.value) }.sorted { $0.opcode < $1.opcode }
    }

    /// Whether the catalog lists `type`.
    public func contains(_ type: any WireMessage.Type) -> Bool { opcodes[ObjectIdentifier(type)] != nil }

    /// The request an opcode names, if any.
    public func type(of opcode: UInt8) -> (any WireMessage.Type)? { types[opcode] }

    /// `Message`'s opcode.
    ///
    /// - Precondition: the catalog lists `Message` (sending a request of another protocol
    ///   is a programmer's error).
    public func opcode<Message: WireMessage>(of _: Message.Type) -> UInt8 {
        guard let opcode = opcodes[ObjectIdentifier(Message.self)] else { preconditionFailure("\(Message.self) is not in this catalog") }
        return opcode
    }
}

/// One request–response protocol over length-prefixed frames (``FrameIO``): its version,
/// its limits and its catalog. Both protocols frame the same way:
///
/// - request: version, opcode, the user's presence where the protocol carries it (0, or 1
///   and the keychain passcode), then the request's fields;
/// - response: version, OSStatus (i32); on success the response's fields, otherwise a
///   message and optional details.
///
/// A version this side does not know is refused with errSecDecode before anything else is read.
public protocol WireProtocol: SendableMetatype {
    static var version: UInt8 { get }
    /// The largest frame either side accepts.
    static var maximumFrameSize: Int { get }
    static var catalog: MessageCatalog { get }
    /// Whether request frames carry the user's presence (securityd's do; the enclave's,
    /// which get the passcode as a field where they need it, do not).
    static var carriesPresence: Bool { get }
}

/// A request frame's header; the reader is left at the request's fields.
public struct WireRequestHeader {
    public let opcode: UInt8
    /// The keychain passcode the client sent as the user's presence (not yet verified).
    public let presence: SecretBytes?
}

extension WireProtocol {
    /// The longest passcode a request header may carry as the user's presence.
    static var presenceLimit: Int { 4096 }
    /// The longest error message a response may carry.
    static var messageLimit: Int { 4096 }

    /// A request's frame, with the keychain passcode as the user's presence when given.
    public static func encode<Request: WireMessage>(_ request: Request, presence: SecretBytes? = nil) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        out.append(catalog.opcode(of: Request.self))
        if carriesPresence { out.appendOptionalSecret(presence) }
        request.encode(to: &out)
        return out
    }

    /// Reads a request frame's header.
    ///
    /// - Throws: `errSecDecode` for an unknown version or a malformed header.
    public static func header(_ reader: inout ByteReader) throws -> WireRequestHeader {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let opcode = try reader.byte()
        return WireRequestHeader(opcode: opcode, presence: carriesPresence ? try reader.optionalSecret(limit: presenceLimit) : nil)
    }

    /// Decodes a whole request frame of a request in the catalog.
    ///
    /// - Throws: `errSecDecode` for an unknown version or opcode, malformed fields or
    ///   trailing bytes.
    public static func decodeRequest(_ reader: inout ByteReader) throws -> (request: any WireMessage, presence: SecretBytes?) {
        let header = try header(&reader)
        guard let type = catalog.type(of: header.opcode) else { throw KeychainError.decode("unknown request") }
        let request = try type.init(from: &reader)
        try reader.expectEnd("request")
        return (request, header.presence)
    }

    /// A successful response.
    public static func success<Response: WireCodable>(_ response: Response) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        OSStatusCode.success.encode(to: &out)
        response.encode(to: &out)
        return out
    }

    /// A failed response: its OSStatus, message and details.
    public static func failure(_ error: KeychainError) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        (error.status == .success ? OSStatusCode.internalComponent : error.status).encode(to: &out)
        // Cut only a message too long to be read (a quarter of the limit in characters fits in any UTF-8).
        out.appendLengthPrefixed(error.message.utf8.count <= messageLimit ? error.message : String(error.message.prefix(messageLimit / 4)))
        error.details.encode(to: &out)
        return out
    }

    /// The response to `Request`, or the error it carries.
    ///
    /// - Throws: the other side's error, or `errSecDecode` for a malformed response.
    public static func decodeResponse<Request: WireMessage>(_ reader: inout ByteReader, to _: Request.Type) throws -> Request.Response {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let status = try OSStatusCode(from: &reader)
        guard status == .success else {
            let message = try reader.string(limit: messageLimit)
            let details = try KeychainValue?(from: &reader)
            try reader.expectEnd("response")
            throw KeychainError(status: status, message: message, details: details)
        }
        let response = try Request.Response(from: &reader)
        try reader.expectEnd("response")
        return response
    }
}
