public import FoundationEssentials
public import KeychainModel

extension Service {
    /// A developer certificate for `team` and its public key (P-256, raw), issued by the
    /// keychain's local developer root.
    public struct IssueDeveloperCertificate: ServiceRequest {
        public static let opcode: UInt8 = 20
        public static let authorization = Authorization.securityToolWithPresence(operation: "signing with the local developer root")
        public var team: String
        public var applicationGroups: [String]
        public var publicKey: Data

        public init(team: String, applicationGroups: [String], publicKey: Data) {
            self.team = team
            self.applicationGroups = applicationGroups
            self.publicKey = publicKey
        }

        public init(from reader: inout ByteReader) throws {
            team = try reader.string(limit: 64)
            guard case .array(let values) = try KeychainValue.decode(from: &reader) else {
                throw KeychainError.decode("application groups are an array")
            }
            applicationGroups = try values.map {
                guard case .string(let group) = $0 else { throw KeychainError.decode("an application group is a string") }
                return group
            }
            publicKey = try reader.lengthPrefixed(limit: 256)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(team)
            KeychainValue.array(applicationGroups.map { .string($0) }).encode(to: &writer)
            writer.appendLengthPrefixed(publicKey)
        }

        /// The certificate (DER) and the root that issued it (DER).
        public struct Response: WireCodable, Hashable {
            public var certificate: Data
            public var root: Data

            public init(certificate: Data, root: Data) {
                self.certificate = certificate
                self.root = root
            }

            public init(from reader: inout ByteReader) throws {
                certificate = try reader.lengthPrefixed(limit: 64 * 1024)
                root = try reader.lengthPrefixed(limit: 64 * 1024)
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(certificate)
                writer.appendLengthPrefixed(root)
            }
        }
    }
}
