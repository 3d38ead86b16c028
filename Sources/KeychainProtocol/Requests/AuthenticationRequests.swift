public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Evidence of the user's presence for an authentication context, checked by the
    /// enclave (which throttles passcodes as it throttles unlocks).
    public struct Authenticate: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 40
        public static let authorization = Authorization.anyCaller
        public var request: AuthenticationRequest

        public init(_ request: AuthenticationRequest) { self.request = request }
        public init(from reader: inout ByteReader) throws { request = try AuthenticationRequest(from: &reader) }
        public func encode(to writer: inout ByteWriter) { request.encode(to: &writer) }
    }

    /// Forgets an authentication context (`LAContext.invalidate`).
    public struct InvalidateAuthentication: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 41
        public static let authorization = Authorization.anyCaller
        public var context: Data

        public init(context: Data) { self.context = context }
        public init(from reader: inout ByteReader) throws { context = try reader.lengthPrefixed(limit: 64) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(context) }
    }

    /// What the enclave can check: passcode, sensor, enrollment.
    public struct AuthenticationCapabilitiesRequest: ServiceRequest {
        public typealias Response = AuthenticationCapabilities
        public static let opcode: UInt8 = 42
        public static let authorization = Authorization.anyCaller

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }
}
