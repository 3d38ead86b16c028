public import FoundationEssentials
public import KeychainModel

extension Service {
    /// An escrow keybag of the class C keys for a designated agent.
    public struct CreateEscrow: ServiceRequest {
        public static let opcode: UInt8 = 60
        public static let authorization = Authorization.securityToolWithPresence(operation: "making an escrow keybag")

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}

        /// The escrow keybag's id and the secret the agent keeps.
        public struct Response: WireCodable {
            public var id: Data
            public var secret: SecretBytes

            public init(id: Data, secret: SecretBytes) {
                self.id = id
                self.secret = secret
            }

            public init(from reader: inout ByteReader) throws {
                id = try reader.lengthPrefixed(limit: 64)
                secret = try reader.secret(limit: 64)
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(id)
                writer.appendSecret(secret)
            }
        }
    }

    /// Makes class C available with an escrow keybag's secret (any caller: the secret is
    /// the authority).
    public struct UnlockWithEscrow: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 61
        public static let authorization = Authorization.anyCaller
        public var id: Data
        public var secret: SecretBytes

        public init(id: Data, secret: SecretBytes) {
            self.id = id
            self.secret = secret
        }

        public init(from reader: inout ByteReader) throws {
            id = try reader.lengthPrefixed(limit: 64)
            secret = try reader.secret(limit: 64)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(id)
            writer.appendSecret(secret)
        }
    }

    /// Revokes an escrow keybag.
    public struct RevokeEscrow: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 62
        public static let authorization = Authorization.securityToolWithPresence(operation: "revoking an escrow keybag")
        public var id: Data

        public init(id: Data) { self.id = id }
        public init(from reader: inout ByteReader) throws { id = try reader.lengthPrefixed(limit: 64) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(id) }
    }
}
