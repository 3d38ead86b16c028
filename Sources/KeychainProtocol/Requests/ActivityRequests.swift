import FoundationEssentials
public import KeychainModel

extension Service {
    /// The keychain's recent refusals — access denied, a wrong password, interaction not
    /// allowed — newest first (Keychain Access's activity view). Never a query's values or a
    /// secret: which request, which program, and the status.
    public struct CopySecurityActivity: ServiceRequest, Codable {
        public typealias Response = SecurityActivityList
        public static let authorization = Authorization.securityTool(operation: "reading the keychain's activity")

        public init() {}
    }

    public struct SecurityActivityList: WireCodable, Sendable, Hashable, Codable {
        public var events: [SecurityActivityEvent]

        public init(events: [SecurityActivityEvent]) {
            self.events = events
        }
    }

    /// One refusal.
    public struct SecurityActivityEvent: WireCodable, Sendable, Hashable, Codable {
        /// Seconds since 1970.
        public var time: Int64
        /// The request's name (`CopyMatching`, `Unlock`, …).
        public var request: String
        /// The caller's executable and pid.
        public var program: String
        public var pid: Int32
        /// The OSStatus it was answered with.
        public var status: Int32

        public init(time: Int64, request: String, program: String, pid: Int32, status: Int32) {
            self.time = time
            self.request = request
            self.program = program
            self.pid = pid
            self.status = status
        }
    }
}
