public import FoundationEssentials
public import KeychainModel

extension Service {
    /// A developer certificate for `team` and its public key (P-256, raw), issued by the
    /// keychain's local developer root.
    @WireStruct
    public struct IssueDeveloperCertificate: ServiceRequest {
        public static let authorization = Authorization.securityToolWithPresence(operation: "signing with the local developer root")
        public var team: String
        public var applicationGroups: [String]
        public var publicKey: Data

        /// The certificate (DER) and the root that issued it (DER).
        @WireStruct
        public struct Response: WireCodable, Hashable {
            public var certificate: Data
            public var root: Data
        }
    }
}
