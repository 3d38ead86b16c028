public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Evaluates a certificate chain (`SecTrustEvaluateWithError`): securityd builds the
    /// chain to an anchor and applies the policies, as Apple's trustd does.
    public struct EvaluateTrust: ServiceRequest {
        public typealias Response = TrustEvaluation
        public static let opcode: UInt8 = 70
        public static let authorization = Authorization.anyCaller
        static let certificateLimit = 64
        static let certificateSize = 64 * 1024

        /// The certificate to evaluate first, then any that may help build its chain (DER).
        public var certificates: [Data]
        public var policies: [TrustPolicy]
        /// The caller's anchors; empty: none.
        public var anchors: [Data]
        /// Whether the system's roots are anchors too.
        public var trustsSystemRoots: Bool
        /// The time the chain must be valid at.
        public var verifyDate: Date

        public init(certificates: [Data], policies: [TrustPolicy], anchors: [Data], trustsSystemRoots: Bool, verifyDate: Date) {
            self.certificates = certificates
            self.policies = policies
            self.anchors = anchors
            self.trustsSystemRoots = trustsSystemRoots
            self.verifyDate = verifyDate
        }

        public init(from reader: inout ByteReader) throws {
            certificates = try Self.certificates(from: &reader)
            guard !certificates.isEmpty else { throw KeychainError.decode("a trust has at least one certificate") }
            let count = Int(try reader.byte())
            guard count <= 8 else { throw KeychainError.decode("too many policies") }
            policies = try (0..<count).map { _ in try TrustPolicy(from: &reader) }
            anchors = try Self.certificates(from: &reader)
            trustsSystemRoots = try Bool(from: &reader)
            verifyDate = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.integer(UInt64.self)))
            guard verifyDate.timeIntervalSinceReferenceDate.isFinite else { throw KeychainError.decode("the verify date is not a date") }
        }

        public func encode(to writer: inout ByteWriter) {
            Self.encode(certificates, to: &writer)
            writer.append(UInt8(policies.count))
            for policy in policies { policy.encode(to: &writer) }
            Self.encode(anchors, to: &writer)
            trustsSystemRoots.encode(to: &writer)
            writer.appendInteger(verifyDate.timeIntervalSinceReferenceDate.bitPattern)
        }

        static func certificates(from reader: inout ByteReader) throws -> [Data] {
            let count = Int(try reader.integer(UInt16.self))
            guard count <= certificateLimit else { throw KeychainError.decode("too many certificates") }
            return try (0..<count).map { _ in try reader.lengthPrefixed(limit: certificateSize) }
        }

        static func encode(_ certificates: [Data], to writer: inout ByteWriter) {
            writer.appendInteger(UInt16(certificates.count))
            for certificate in certificates { writer.appendLengthPrefixed(certificate) }
        }
    }

    /// A policy a chain is evaluated against (`SecPolicyRef`).
    public enum TrustPolicy: WireCodable, Hashable {
        /// `SecPolicyCreateBasicX509`.
        case basicX509
        /// `SecPolicyCreateSSL`: a server's or a client's certificate, and the server's name.
        case ssl(server: Bool, hostname: String?)
        /// Code signing (`security find-identity -p codesigning`): the code-signing usage.
        case codeSigning

        public init(from reader: inout ByteReader) throws {
            switch try reader.byte() {
            case 0: self = .basicX509
            case 1:
                let server = try Bool(from: &reader)
                let hostname = try Bool(from: &reader) ? try reader.string(limit: 1024) : nil
                self = .ssl(server: server, hostname: hostname)
            case 2: self = .codeSigning
            default: throw KeychainError.decode("unknown trust policy")
            }
        }

        public func encode(to writer: inout ByteWriter) {
            switch self {
            case .basicX509:
                writer.append(0)
            case .ssl(let server, let hostname):
                writer.append(1)
                server.encode(to: &writer)
                (hostname != nil).encode(to: &writer)
                if let hostname { writer.appendLengthPrefixed(hostname) }
            case .codeSigning:
                writer.append(2)
            }
        }
    }

    /// The outcome of an evaluation: Apple's result type, the status of the check that
    /// decided it (`errSecSuccess` when trusted) with its words, and the chain built.
    public struct TrustEvaluation: WireCodable, Hashable {
        /// `SecTrustResultType`'s raw value: 4 (unspecified) when trusted, 5 (recoverable
        /// trust failure) when not.
        public var result: UInt8
        public var status: OSStatusCode
        public var message: String
        public var chain: [Data]

        public init(result: UInt8, status: OSStatusCode, message: String, chain: [Data]) {
            self.result = result
            self.status = status
            self.message = message
            self.chain = chain
        }

        public init(from reader: inout ByteReader) throws {
            result = try reader.byte()
            status = try OSStatusCode(from: &reader)
            message = try reader.string(limit: 4096)
            chain = try EvaluateTrust.certificates(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.append(result)
            status.encode(to: &writer)
            writer.appendLengthPrefixed(message)
            EvaluateTrust.encode(chain, to: &writer)
        }
    }
}
