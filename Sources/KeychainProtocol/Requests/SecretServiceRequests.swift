public import KeychainModel

extension Service {
    /// Asks a running securityd to serve the freedesktop Secret Service on the session bus at
    /// `busAddress` (what `securityd --secret-service`, started by D-Bus activation, sends when
    /// this keychain's daemon already runs). Answered once the daemon has asked the bus for
    /// the name; errSecDuplicateItem when another process owns it.
    ///
    /// Any process of the user may ask: the bus named is trusted as the session's, as the
    /// bus an activated daemon finds in its environment is (docs/SECURITY.md, "Secret Service").
    public struct ServeSecretService: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 90
        public static let authorization = Authorization.anyCaller
        public var busAddress: String

        public init(busAddress: String) { self.busAddress = busAddress }
        public init(from reader: inout ByteReader) throws { busAddress = try reader.string(limit: 4096) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(busAddress) }
    }
}
