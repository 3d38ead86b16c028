public import FoundationEssentials
public import KeychainModel

extension Service {
    /// A developer certificate for `team` and its public key (P-256, raw), issued by the
    /// keychain's local developer root.
    public struct IssueDeveloperCertificate: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "signing with the local developer root")
        public var team: String
        public var applicationGroups: [String]
        public var publicKey: Data

        /// The certificate (DER) and the root that issued it (DER).
        public struct Response: WireCodable, Hashable, Codable {
            public var certificate: Data
            public var root: Data

            public init(certificate: Data, root: Data) {
                self.certificate = certificate
                self.root = root
            }
        }

        public init(team: String, applicationGroups: [String], publicKey: Data) {
            self.team = team
            self.applicationGroups = applicationGroups
            self.publicKey = publicKey
        }
    }
}
