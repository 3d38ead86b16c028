public import EnclaveProtocol
import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem

/// Serves the enclave protocol for one keybag on one connection, until the peer closes it.
public struct EnclaveServer: Sendable {
    let keybag: SoftwareKeybag
    let memoryLocked: Bool

    public init(keybag: SoftwareKeybag, memoryLocked: Bool) {
        self.keybag = keybag
        self.memoryLocked = memoryLocked
    }

    /// The keybag whose keys a key request uses: a file keychain's, or the device's.
    func keybag(for keychain: UUID?) -> any Keybag {
        keychain.map { FileKeychainKeybag(keybag: keybag, uuid: $0) } ?? keybag
    }

    /// Answers requests on `fd` until end of stream. A malformed request gets an error
    /// response and ends the connection: only the daemon talks to the enclave, so it is a bug.
    public func serve(fd: Int32) {
        FrameIO.serve(fd, maximumSize: EnclaveWire.maximumFrameSize, failure: EnclaveWire.failure) { reader in
            try respond(to: &reader)
        }
    }

    /// The response frame to one request frame.
    ///
    /// - Throws: `errSecDecode` for a frame that is not a request of ``EnclaveCatalog``
    ///   (the connection then ends); errors of the request itself become failure responses.
    public func respond(to reader: inout ByteReader) throws -> ByteWriter {
        let opcode = try EnclaveWire.opcode(&reader)
        guard let handler = Self.handlers[opcode] else { throw KeychainError.decode("unknown enclave request") }
        return try handler(&reader, self)
    }

    /// One entry per request of the catalog that has a handler.
    private static let handlers: [UInt8: @Sendable (inout ByteReader, EnclaveServer) throws -> ByteWriter] = {
        var table: [UInt8: @Sendable (inout ByteReader, EnclaveServer) throws -> ByteWriter] = [:]
        for type in EnclaveCatalog.requests {
            if let handled = type as? any EnclaveHandled.Type { table[type.opcode] = entry(handled) }
        }
        return table
    }()

    /// The requests of the catalog without a handler (a test expects none).
    public static var unhandledRequests: [any EnclaveRequest.Type] {
        EnclaveCatalog.requests.filter { handlers[$0.opcode] == nil }
    }

    private static func entry<Request: EnclaveHandled>(_: Request.Type) -> @Sendable (inout ByteReader, EnclaveServer) throws -> ByteWriter {
        { reader, server in
            let request = try Request(from: &reader)
            try reader.expectEnd("enclave request")
            do {
                return EnclaveWire.success(try request.handle(in: server))
            } catch let error as KeychainError {
                return EnclaveWire.failure(error)
            } catch {
                return EnclaveWire.failure(KeychainError.internalComponent)
            }
        }
    }
}

/// A request the enclave serves, and how.
protocol EnclaveHandled: EnclaveRequest {
    func handle(in server: EnclaveServer) throws -> Response
}
