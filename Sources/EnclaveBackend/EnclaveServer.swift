import EnclaveProtocol
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
        try Self.table.respond(to: &reader, in: self)
    }

    private typealias Table = RequestTable<EnclaveWire, EnclaveServer>

    private static let table = Table(serving: handledRequests.map { ($0, handler(for: $0)) })

    private static func handler<Request: EnclaveHandled>(for _: Request.Type) -> Table.Handler {
        Table.handler(Request.self) { request, _, server in try request.handle(in: server) }
    }

    /// The requests of the catalog without a handler (a test expects none).
    public static var unhandledRequests: [any WireMessage.Type] { table.unserved }
}

/// A request the enclave serves, and how.
protocol EnclaveHandled: EnclaveRequest {
    func handle(in server: EnclaveServer) throws -> Response
}
