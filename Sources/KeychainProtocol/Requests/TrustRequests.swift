public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Evaluates a certificate chain (`SecTrustEvaluateWithError`): securityd builds the
    /// chain to an anchor and applies the policies, as Apple's trustd does.
    public struct EvaluateTrust: ServiceRequest, Codable {
        public typealias Response = TrustEvaluation
        public static let authorization = Authorization.anyCaller
        /// The most certificates (and anchors) one evaluation takes.
        public static let certificateLimit = 64
        /// The longest certificate (DER) one evaluation takes.
        public static let certificateSize = 64 * 1024

        /// The certificate to evaluate first, then any that may help build its chain (DER).
        public var certificates: [Data]
        public var policies: [TrustPolicy]
        /// The caller's anchors; empty: none.
        public var anchors: [Data]
        /// Whether the system's roots are anchors too.
        public var trustsSystemRoots: Bool
        /// The time the chain must be valid at.
        public var verifyDate: Date

        /// Refuses a request no evaluation should start on: no certificate, or more
        /// certificates or policies than a chain uses (each one costs the evaluation).
        ///
        /// - Throws: `errSecParam` naming what is wrong.
        public func validate() throws {
            guard !certificates.isEmpty else { throw KeychainError.param("a trust has at least one certificate") }
            guard max(certificates.count, anchors.count) <= Self.certificateLimit else { throw KeychainError.param("too many certificates") }
            guard policies.count <= 8 else { throw KeychainError.param("too many policies") }
            guard (certificates + anchors).allSatisfy({ $0.count <= Self.certificateSize }) else {
                throw KeychainError.param("a certificate longer than \(Self.certificateSize) bytes")
            }
        }

        public init(certificates: [Data], policies: [TrustPolicy], anchors: [Data], trustsSystemRoots: Bool, verifyDate: Date) {
            self.certificates = certificates
            self.policies = policies
            self.anchors = anchors
            self.trustsSystemRoots = trustsSystemRoots
            self.verifyDate = verifyDate
        }
    }

    /// A policy a chain is evaluated against (`SecPolicyRef`).
    public enum TrustPolicy: WireLeaf, Hashable {
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
    public struct TrustEvaluation: WireCodable, Hashable, Codable {
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
    }
}
