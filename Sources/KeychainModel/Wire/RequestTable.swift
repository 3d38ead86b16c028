/// The server side of a ``WireProtocol``: one handler per opcode of its catalog, each of
/// which decodes the whole request, runs it, and frames its response or its error.
///
/// securityd and the enclave each build one from their handler protocol; what differs
/// between them (the caller's authorization, the keys a request may change) is in the
/// handler they give, not in a second dispatcher.
public struct RequestTable<Wire: WireProtocol, Context>: Sendable {
    /// Decodes a request's fields (the header is read), serves it, frames the outcome.
    public typealias Handler = @Sendable (inout ByteReader, _ presence: SecretBytes?, Context) throws -> ByteWriter

    private let handlers: [UInt8: Handler]
    /// The requests of the catalog without a handler (a server refuses to start with any;
    /// a test expects none).
    public let unserved: [any WireMessage.Type]

    /// - Parameter served: each request this server serves, with its handler
    ///   (``handler(_:_:)``). A server lists them rather than finding them by casting each
    ///   request of the catalog to its handler protocol: the first cast of a type to a
    ///   protocol scans every conformance record of the binary, which at securityd's start
    ///   was 18.9 million instructions for 54 requests.
    /// - Precondition: every request listed is in the catalog, once (a programmer's error,
    ///   caught when the table is first built: at securityd's start, at the enclave's first
    ///   request, and by the tests that ask each for its unserved requests).
    public init(serving served: [(type: any WireMessage.Type, handler: Handler)]) {
        var byType: [ObjectIdentifier: Handler] = [:]
        for (type, handler) in served {
            precondition(Wire.catalog.contains(type), "\(type) is not in the catalog")
            let earlier = byType.updateValue(handler, forKey: ObjectIdentifier(type))
            precondition(earlier == nil, "\(type) is listed twice")
        }
        var handlers: [UInt8: Handler] = [:]
        var unserved: [any WireMessage.Type] = []
        for (opcode, type) in Wire.catalog.requests {
            if let entry = byType[ObjectIdentifier(type)] { handlers[opcode] = entry } else { unserved.append(type) }
        }
        self.handlers = handlers
        self.unserved = unserved
    }

    /// The response frame to one request frame.
    ///
    /// - Throws: `errSecDecode` for a frame that is not a well-formed request of the
    ///   catalog (the connection then ends); the request's own failures are failure responses.
    public func respond(to reader: inout ByteReader, in context: Context) throws -> ByteWriter {
        let header = try Wire.header(&reader)
        guard let handler = handlers[header.opcode] else { throw KeychainError.decode("unknown request") }
        return try handler(&reader, header.presence, context)
    }

    /// The handler of `Request`: `serve` gets the decoded request once the frame has been
    /// read to its end; a ``KeychainError`` it throws is the response, anything else is
    /// errSecInternalComponent.
    public static func handler<Request: WireMessage>(
        _: Request.Type, _ serve: @escaping @Sendable (Request, SecretBytes?, Context) throws -> Request.Response
    ) -> Handler {
        { reader, presence, context in
            let request = try Request(from: &reader)
            try reader.expectEnd("request")
            do {
                return Wire.success(try serve(request, presence, context))
            } catch let error as KeychainError {
                return Wire.failure(error)
            } catch {
                return Wire.failure(KeychainError.internalComponent)
            }
        }
    }
}
