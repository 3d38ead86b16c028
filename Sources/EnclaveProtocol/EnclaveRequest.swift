import FoundationEssentials
public import KeychainModel

/// A request securityd sends to the enclave, with its response type and its place on the
/// wire. Class keys never cross the boundary: the daemon gets item keys wrapped or
/// unwrapped, and the derived metadata and index keys it caches.
///
/// Adding one: declare the type in `Requests/`, list it in ``EnclaveCatalog/requests``,
/// write its handler in `EnclaveBackend` (a conformance to `EnclaveHandled`). Only securityd
/// talks to the enclave (over a socketpair it made), so there is no authorization to declare;
/// what there is to declare is whether it may change which keys are available.
public protocol EnclaveRequest: WireCodable {
    associatedtype Response: WireCodable
    /// Its number on the wire, unique in ``EnclaveCatalog/requests``.
    static var opcode: UInt8 { get }
    /// Whether it may lock, unlock or remove a class key: securityd drops the metadata keys
    /// it caches before and after sending it.
    static var mayChangeAvailableKeys: Bool { get }
}

/// The requests the enclave understands, each once.
public enum EnclaveCatalog {
    public static let requests: [any EnclaveRequest.Type] = [
        EnclaveCall.Status.self, EnclaveCall.Unlock.self, EnclaveCall.Lock.self, EnclaveCall.ChangePasscode.self,
        EnclaveCall.UpdateSettings.self, EnclaveCall.IndexKey.self, EnclaveCall.MetadataKey.self,
        EnclaveCall.WrapItemKey.self, EnclaveCall.UnwrapItemKey.self,
        EnclaveCall.Authenticate.self, EnclaveCall.InvalidateAuthentication.self, EnclaveCall.AuthenticationCapabilities.self,
        EnclaveCall.BeginBackup.self, EnclaveCall.OpenBackup.self, EnclaveCall.BackupMetadataKey.self,
        EnclaveCall.ExportSecret.self, EnclaveCall.ImportSecret.self, EnclaveCall.EndBackup.self,
        EnclaveCall.CreateEscrow.self, EnclaveCall.UnlockWithEscrow.self, EnclaveCall.RevokeEscrow.self,
        EnclaveCall.CreateEnclaveKey.self, EnclaveCall.UseEnclaveKey.self,
        EnclaveCall.CreateFileKeychain.self, EnclaveCall.UnlockFileKeychain.self, EnclaveCall.LockFileKeychain.self,
        EnclaveCall.FileKeychainUnlocked.self, EnclaveCall.SetFileKeychainTimeout.self, EnclaveCall.ChangeFileKeychainPassword.self,
    ]
}

/// The namespace of the enclave's requests and their responses.
public enum EnclaveCall {
    /// The longest byte string a field may hold (passcodes, associated data, wrapped keys).
    static let fieldLimit = 16 * 1024
    /// The longest secret blob (a 1 MiB secret and its headers fit).
    static let blobLimit = 3 << 20
    /// The longest session or escrow id.
    static let idLimit = 64
}

/// The frames between securityd and the enclave, inside `FrameIO`'s length prefix.
///
/// Request: version, opcode, the request's fields. Response: version, then 0 and the
/// response's fields, or 1, the OSStatus (i32) and a message.
public enum EnclaveWire {
    public static let version: UInt8 = 2
    /// The largest frame either side accepts: a secret blob being re-sealed for a backup.
    public static let maximumFrameSize = 4 << 20

    public static func encode<Request: EnclaveRequest>(_ request: Request) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        out.append(Request.opcode)
        request.encode(to: &out)
        return out
    }

    /// Reads a request frame's version and opcode; the reader is left at its fields.
    ///
    /// - Throws: `errSecDecode` for an unknown version.
    public static func opcode(_ reader: inout ByteReader) throws -> UInt8 {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown enclave protocol version") }
        return try reader.byte()
    }

    /// Decodes a whole request frame of a request in ``EnclaveCatalog``.
    ///
    /// - Throws: `errSecDecode` for an unknown version or opcode, malformed fields or
    ///   trailing bytes.
    public static func decodeRequest(_ reader: inout ByteReader) throws -> any EnclaveRequest {
        let opcode = try opcode(&reader)
        guard let type = EnclaveCatalog.requests.first(where: { $0.opcode == opcode }) else {
            throw KeychainError.decode("unknown enclave request")
        }
        let request = try type.init(from: &reader)
        try reader.expectEnd("enclave request")
        return request
    }

    public static func success<Response: WireCodable>(_ response: Response) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        out.append(0)
        response.encode(to: &out)
        return out
    }

    public static func failure(_ error: KeychainError) -> ByteWriter {
        var out = ByteWriter()
        out.append(version)
        out.append(1)
        error.status.encode(to: &out)
        out.appendLengthPrefixed(error.message)
        return out
    }

    /// The response to `Request`.
    ///
    /// - Throws: the enclave's error, or `errSecDecode` for a malformed response.
    public static func decodeResponse<Request: EnclaveRequest>(_ reader: inout ByteReader, to _: Request.Type) throws -> Request.Response {
        guard try reader.byte() == version else { throw KeychainError.decode("unknown enclave protocol version") }
        switch try reader.byte() {
        case 0:
            let response = try Request.Response(from: &reader)
            try reader.expectEnd("enclave response")
            return response
        case 1:
            let status = try OSStatusCode(from: &reader)
            let message = try reader.string(limit: EnclaveCall.fieldLimit)
            throw KeychainError(status: status, message: message)
        default: throw KeychainError.decode("malformed enclave response")
        }
    }
}

extension Data {
    /// A byte string field of at most `limit` bytes.
    static func field(_ reader: inout ByteReader, limit: Int = EnclaveCall.fieldLimit) throws -> Data {
        try reader.lengthPrefixed(limit: limit)
    }
}
