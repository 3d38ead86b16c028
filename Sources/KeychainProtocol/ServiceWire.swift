public import KeychainModel

/// The frames between clients and securityd, inside `FrameIO`'s length prefix.
///
/// Request: protocol version, opcode, presence (0, or 1 and the keychain passcode), then
/// the request's own fields (``ServiceRequest``). Response: version, OSStatus (i32); on
/// success the response's fields, otherwise a message and optional details. A version this
/// side does not know is refused with errSecDecode before anything else is read.
public enum ServiceWire {
    /// 2: one type per request; the user's presence in the header (1 nested it as a request).
    public static let version: UInt8 = 2
    /// The largest frame either side accepts: a 1 MiB secret and its attributes.
    public static let maximumFrameSize = 2 << 20

    /// A request's frame, with the keychain passcode as the user's presence when given.
    public static func encode<Request: ServiceRequest>(_ request: Request, presence: SecretBytes? = nil) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        out.append(Request.opcode)
        out.appendOptionalSecret(presence)
        request.encode(to: &out)
        return out
    }

    /// A request frame's header; the reader is left at the request's fields.
    public struct RequestHeader {
        public let opcode: UInt8
        /// The keychain passcode the client sent as the user's presence (not yet verified).
        public let presence: SecretBytes?
    }

    /// Reads a request frame's header.
    ///
    /// - Throws: `errSecDecode` for an unknown version or a malformed header.
    public static func header(_ reader: inout ByteReader) throws -> RequestHeader {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let opcode = try reader.byte()
        return RequestHeader(opcode: opcode, presence: try reader.optionalSecret(limit: Service.passcodeLimit))
    }

    /// Decodes a whole request frame of a request in ``ServiceCatalog``.
    ///
    /// - Throws: `errSecDecode` for an unknown version or opcode, malformed fields or
    ///   trailing bytes.
    public static func decodeRequest(_ reader: inout ByteReader) throws -> (request: any ServiceRequest, presence: SecretBytes?) {
        let header = try header(&reader)
        guard let type = ServiceCatalog.requests.first(where: { $0.opcode == header.opcode }) else {
            throw KeychainError.decode("unknown request")
        }
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
        out.appendLengthPrefixed(error.message)
        error.details.encode(to: &out)
        return out
    }

    /// The response to `Request`, or the error it carries.
    ///
    /// - Throws: the daemon's error, or `errSecDecode` for a malformed response.
    public static func decodeResponse<Request: ServiceRequest>(_ reader: inout ByteReader, to _: Request.Type) throws -> Request.Response {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let status = try OSStatusCode(from: &reader)
        guard status == .success else {
            let message = try reader.string(limit: 4096)
            let details = try KeychainValue?(from: &reader)
            try reader.expectEnd("response")
            throw KeychainError(status: status, message: message, details: details)
        }
        let response = try Request.Response(from: &reader)
        try reader.expectEnd("response")
        return response
    }
}
