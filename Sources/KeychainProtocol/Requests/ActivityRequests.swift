import FoundationEssentials
public import KeychainModel

extension Service {
    /// The keychain's recent refusals — access denied, a wrong password, interaction not
    /// allowed — newest first (Keychain Access's activity view). Never a query's values or a
    /// secret: which request, which program, and the status.
    @WireStruct
    public struct CopySecurityActivity: ServiceRequest {
        public typealias Response = SecurityActivityList
        public static let authorization = Authorization.securityTool(operation: "reading the keychain's activity")
    }

    @WireStruct
    public struct SecurityActivityList: WireCodable, Sendable, Hashable {
        public var events: [SecurityActivityEvent]
    }

    /// One refusal.
    @WireStruct
    public struct SecurityActivityEvent: WireCodable, Sendable, Hashable {
        /// Seconds since 1970.
        public var time: Int64
        /// The request's name (`CopyMatching`, `Unlock`, …).
        public var request: String
        /// The caller's executable and pid.
        public var program: String
        public var pid: Int32
        /// The OSStatus it was answered with.
        public var status: Int32
    }
}
