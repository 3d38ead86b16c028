import Dispatch
import FoundationEssentials
import KeychainCertificates
import KeychainModel
import KeychainProtocol
import SwiftASN1
// The opt-in swift-certificates documents for checking dates apart.
@_spi(DisableValidityCheck) import X509

#if canImport(Glibc)
import Glibc
#endif

/// Evaluates a certificate chain as Apple's trustd does, and reports the failure Apple
/// would: every check runs, and the one of highest priority decides the status
/// (SecTrustInternal.h: key size, then trust, then usage, then name, then validity dates).
///
/// swift-certificates' `Verifier` builds the chain to an anchor and checks signatures and
/// RFC 5280's constraints; the checks it does not have (key size, extended key usage) are
/// here. Not checked: revocation (OCSP, CRL), certificate transparency, Apple's
/// validity-period maximums; missing intermediates are never fetched from the network.
enum TrustEvaluator {
    /// A failed check, in Apple's order of priority (lower first).
    private enum Failure: Int, Comparable {
        /// `expired` is Apple's TemporalValidity check: outside the validity period on either
        /// side (a certificate not yet valid is errSecCertificateExpired too; Apple's
        /// errSecCertificateNotValidYet is its NotValidBefore check, an issuing-date policy).
        case keySize, denied, notTrusted, missingIntermediate, usage, name, expired

        var status: OSStatusCode {
            switch self {
            case .keySize: .unsupportedKeySize
            case .denied: .trustSettingDeny
            case .notTrusted: .notTrusted
            case .missingIntermediate: .createChainFailed
            case .usage: .invalidExtendedKeyUsage
            case .name: .hostNameMismatch
            case .expired: .certificateExpired
            }
        }

        func message(_ summary: String) -> String {
            switch self {
            case .keySize: "“\(summary)” certificate is using a broken key size"
            case .denied: "User or administrator set “\(summary)” certificate as distrusted"
            case .notTrusted, .missingIntermediate: "“\(summary)” certificate is not trusted"
            case .usage: "“\(summary)” certificate is not permitted for this usage"
            case .name: "“\(summary)” certificate name does not match input"
            case .expired: "“\(summary)” certificate is expired"
            }
        }

        static func < (lhs: Failure, rhs: Failure) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    static let trusted: UInt8 = 4  // kSecTrustResultUnspecified
    static let deny: UInt8 = 3  // kSecTrustResultDeny
    static let recoverable: UInt8 = 5  // kSecTrustResultRecoverableTrustFailure
    static let otherError: UInt8 = 7  // kSecTrustResultOtherError

    /// - Parameter settings: the user's and administrator's trust settings, in that order
    ///   (the first for a certificate decides). Their anchors count unless the caller's
    ///   anchors are the only ones; a `deny` counts always.
    static func evaluate(_ request: Service.EvaluateTrust, settings: [TrustSettingsRecord] = []) -> Service.TrustEvaluation {
        let decisions = TrustDecisions(settings, policies: request.policies)
        // Each certificate parsed once, both ways.
        let given = request.certificates.map(Parsed.init)
        let settingsAnchors = request.trustsSystemRoots ? decisions.anchors.map(Parsed.init) : []
        let anchorsGiven = request.anchors.map(Parsed.init) + settingsAnchors
        guard let leaf = given[0].fields else {
            return Service.TrustEvaluation(result: otherError, status: .decode, message: "the certificate cannot be parsed", chain: [])
        }
        let others = given.dropFirst().compactMap(\.fields)
        let anchors = anchorsGiven.compactMap(\.fields)
        // Certificates the settings deny are issuers too, so that a chain through one is
        // reported as denied rather than as incomplete.
        let denied = decisions.denied.compactMap { try? CertificateFields(der: Array($0)) }
        let anchorDER = Set(anchors.map(\.der))
        var known: [Certificate: CertificateFields] = [:]
        for parsed in given + anchorsGiven {
            if let certificate = parsed.certificate, let fields = parsed.fields { known[certificate] = fields }
        }

        // The chain Apple's path builder would settle on when no anchor is reached: by name,
        // from the leaf, through the given certificates and anchors, without loops.
        var named = [leaf]
        while let tip = named.last, !tip.isSelfIssued, named.count < 16,
            let issuer = (others + anchors + denied).first(where: { candidate in
                candidate.subject.normalizedContent == tip.issuer.normalizedContent && !named.contains { $0.der == candidate.der }
            })
        {
            named.append(issuer)
        }

        let servers = request.policies.compactMap { policy -> (server: Bool, hostname: String?)? in
            if case .ssl(let server, let hostname) = policy { return (server, hostname) }
            return nil
        }
        // One verification with every name to match; only when it fails, another without
        // them, to tell a name that does not match from a chain that is not trusted.
        let hostnames = servers.compactMap(\.hostname)
        var failures: [(Failure, Int)] = []
        var trustedChain = verify(given, anchors: anchorsGiven, systemRoots: request.trustsSystemRoots, hostnames: hostnames, known: known)
        if trustedChain == nil, !hostnames.isEmpty {
            trustedChain = verify(given, anchors: anchorsGiven, systemRoots: request.trustsSystemRoots, hostnames: [], known: known)
            if trustedChain != nil { failures.append((.name, 0)) }
        }
        let chain = trustedChain ?? named
        for (index, certificate) in chain.enumerated() where !anchorDER.contains(certificate.der) || index == 0 {
            if let failure = keySize(certificate, serverPolicy: servers.contains { $0.server }) { failures.append((failure, index)) }
        }
        if trustedChain == nil {
            failures.append((named.last?.isSelfIssued == true ? .notTrusted : .missingIntermediate, named.count - 1))
        }
        for ssl in servers where !permits(given[0].certificate, server: ssl.server) {
            failures.append((.usage, 0))
        }
        if request.policies.contains(.codeSigning), !signsCode(given[0].certificate) { failures.append((.usage, 0)) }
        for (index, certificate) in chain.enumerated() {
            if certificate.notValidAfter < request.verifyDate || certificate.notValidBefore > request.verifyDate {
                failures.append((.expired, index))
            }
        }
        for (index, certificate) in chain.enumerated() where decisions.decision(for: certificate.der) == .deny {
            failures.append((.denied, index))
        }
        let encoded = chain.map { Data($0.der) }
        guard let (failure, index) = failures.min(by: { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }) else {
            return Service.TrustEvaluation(result: trusted, status: .success, message: "", chain: encoded)
        }
        let summary = chain[index].subjectSummary ?? ""
        let result = failures.contains { $0.0 == .denied } ? deny : recoverable
        return Service.TrustEvaluation(result: result, status: failure.status, message: failure.message(summary), chain: encoded)
    }

    /// A certificate as both parsers read it (either may refuse it: swift-certificates
    /// refuses RSA keys under 2048 bits and unknown key algorithms).
    private struct Parsed {
        let fields: CertificateFields?
        let certificate: Certificate?

        init(_ der: Data) {
            let bytes = Array(der)
            fields = try? CertificateFields(der: bytes)
            certificate = try? Certificate(derEncoded: bytes)
        }
    }

    /// Apple's key sizes: RSA from 2048 bits and EC from 256 for an SSL server's chain,
    /// RSA from 1024 otherwise.
    private static func keySize(_ certificate: CertificateFields, serverPolicy: Bool) -> Failure? {
        guard let isRSA = certificate.isRSA, let bits = certificate.publicKeySizeInBits else { return nil }
        let minimum = isRSA ? (serverPolicy ? 2048 : 1024) : (serverPolicy ? 256 : 0)
        return bits < minimum ? .keySize : nil
    }

    /// Apple's extended key usage rule for SSL: none, anyExtendedKeyUsage, or serverAuth
    /// (Microsoft and Netscape SGC too) for a server; clientAuth for a client.
    private static func permits(_ certificate: Certificate?, server: Bool) -> Bool {
        guard let certificate else { return true }
        guard let usages = try? certificate.extensions.extendedKeyUsage else { return true }
        let accepted: [ExtendedKeyUsage.Usage] =
            server
            ? [.serverAuth, .any, ExtendedKeyUsage.Usage(oid: [1, 3, 6, 1, 4, 1, 311, 10, 3, 3]), ExtendedKeyUsage.Usage(oid: [2, 16, 840, 1, 113_730, 4, 1])]
            : [.clientAuth, .any]
        return usages.contains { accepted.contains($0) }
    }

    /// Apple's code-signing policy: the code-signing extended key usage.
    private static func signsCode(_ certificate: Certificate?) -> Bool {
        guard let usages = try? certificate?.extensions.extendedKeyUsage else { return false }
        return usages.contains(.codeSigning)
    }

    /// The chain swift-certificates' verifier builds from the leaf to an anchor, with
    /// RFC 5280's rules but not its dates (a chain rejected for them would read as
    /// untrusted; they are checked apart, at the date asked for), matching `hostnames`;
    /// nil when there is none.
    private static func verify(
        _ given: [Parsed], anchors: [Parsed], systemRoots: Bool, hostnames: [String], known: [Certificate: CertificateFields]
    ) -> [CertificateFields]? {
        guard let leaf = given[0].certificate else { return nil }
        let intermediates = CertificateStore(given.dropFirst().compactMap(\.certificate))
        var roots = systemRoots ? CertificateStore.systemTrustRoots : CertificateStore()
        roots.append(contentsOf: anchors.compactMap(\.certificate))
        let outcome = BlockingMutex<[Certificate]?>(nil)
        let done = DispatchSemaphore(value: 0)
        let anchorStore = roots
        Task.detached {
            var verifier = Verifier(rootCertificates: anchorStore) {
                RFC5280Policy.withValidityCheckDisabled()
                HostnamesPolicy(hostnames: hostnames)
            }
            if case .validCertificate(let chain) = await verifier.validate(leaf: leaf, intermediates: intermediates) {
                outcome.withLock { $0 = Array(chain) }
            }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0 }?.compactMap { certificate in
            if let fields = known[certificate] { return fields }
            var serializer = DER.Serializer()  // a system root
            guard (try? serializer.serialize(certificate)) != nil else { return nil }
            return try? CertificateFields(der: serializer.serializedBytes)
        }
    }
}

/// What trust settings decide for the policies of one evaluation: for each certificate,
/// the first record that names it (the user's before the administrator's), and in it the
/// first usage constraint that applies with a decision; no constraints at all is trustRoot.
struct TrustDecisions {
    private var byCertificate: [[UInt8]: TrustSettingsResult] = [:]
    /// The certificates the settings make anchors, in the settings' order.
    private(set) var anchors: [Data] = []
    /// The certificates the settings deny.
    private(set) var denied: [Data] = []

    init(_ records: [TrustSettingsRecord], policies: [Service.TrustPolicy]) {
        for record in records where byCertificate[Array(record.certificate)] == nil {
            let decision: TrustSettingsResult? =
                record.constraints.isEmpty
                ? .trustRoot
                : record.constraints.lazy.filter { Self.applies($0, to: policies) }.compactMap { $0.result ?? .trustRoot }.first { $0 != .unspecified }
            guard let decision else { continue }
            byCertificate[Array(record.certificate)] = decision
            if decision == .trustRoot || decision == .trustAsRoot { anchors.append(record.certificate) }
            if decision == .deny { denied.append(record.certificate) }
        }
    }

    func decision(for der: [UInt8]) -> TrustSettingsResult? { byCertificate[der] }

    /// A constraint without a policy applies to every evaluation; one with a policy to an
    /// evaluation under that policy (and for SSL, with its host name when it names one).
    private static func applies(_ constraint: TrustUsageConstraint, to policies: [Service.TrustPolicy]) -> Bool {
        guard let policy = constraint.policy else { return true }
        return policies.contains { evaluated in
            switch (policy, evaluated) {
            case ("basic", .basicX509), ("codeSign", .codeSigning): return true
            case ("ssl", .ssl(_, let hostname)):
                guard let wanted = constraint.policyString else { return true }
                return hostname?.lowercased() == wanted.lowercased()
            default: return false
            }
        }
    }
}

/// Every name of the SSL policies (each a DNS name or an IP address) matches the leaf, by
/// swift-certificates' `ServerIdentityPolicy`.
private struct HostnamesPolicy: VerifierPolicy {
    var policies: [ServerIdentityPolicy]

    init(hostnames: [String]) {
        policies = hostnames.map { name in
            var v4 = in_addr()
            var v6 = in6_addr()
            let isAddress = inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
            return ServerIdentityPolicy(serverHostname: isAddress ? nil : name, serverIP: isAddress ? name : nil)
        }
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] { policies.isEmpty ? [] : [.X509ExtensionID.subjectAlternativeName] }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for index in policies.indices {
            if case .failsToMeetPolicy(let reason) = policies[index].chainMeetsPolicyRequirements(chain: chain) {
                return .failsToMeetPolicy(reason: reason)
            }
        }
        return .meetsPolicy
    }
}
