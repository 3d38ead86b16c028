import Crypto
import Foundation
import Security
import SwiftASN1
import X509

/// A trust evaluation of a three-certificate chain (root, intermediate, server leaf) through
/// `SecTrustEvaluateWithError` — one request to securityd, which verifies with
/// swift-certificates — beside its floor: the same verification in this process.
enum TrustOperation {
    static func measure(count: Int) throws -> BenchReport.KeyOperation {
        let (root, intermediate, leaf) = try chain()
        let secCertificates = try [leaf, intermediate, root].map { certificate -> SecCertificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            guard let made = SecCertificateCreateWithData(nil, Data(serializer.serializedBytes) as CFData) else { throw BenchError("a certificate") }
            return made
        }
        let policy = SecPolicyCreateSSL(true, "leaf.example.com" as CFString)
        let evaluate = {
            var trust: SecTrust?
            guard SecTrustCreateWithCertificates([secCertificates[0], secCertificates[1]] as CFArray, policy, &trust) == errSecSuccess, let trust,
                SecTrustSetAnchorCertificates(trust, [secCertificates[2]] as CFArray) == errSecSuccess, SecTrustEvaluateWithError(trust, nil)
            else { throw BenchError("the chain did not evaluate as trusted") }
        }
        let floor = {
            let done = DispatchSemaphore(value: 0)
            let valid = ValidFlag()
            Task.detached {
                var verifier = Verifier(rootCertificates: CertificateStore([root])) {
                    RFC5280Policy()
                    ServerIdentityPolicy(serverHostname: "leaf.example.com", serverIP: nil)
                }
                if case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) { valid.set() }
                done.signal()
            }
            done.wait()
            guard valid.value else { throw BenchError("the floor's chain did not verify") }
        }
        for _ in 0..<min(count, 20) {
            try evaluate()
            try floor()
        }
        let measured = try Latencies.measure(count) { _ in try evaluate() }
        let bare = try Latencies.measure(count) { _ in try floor() }
        return BenchReport.KeyOperation(
            operation: "trust evaluation, 3-certificate chain (securityd)", samples: measured.count, p50Micros: measured.p50,
            p99Micros: measured.p99, floor: "swift-certificates Verifier in-process", floorMicros: bare.p50, ratio: measured.p50 / bare.p50)
    }

    private static func chain() throws -> (Certificate, Certificate, Certificate) {
        let rootKey = P256.Signing.PrivateKey(), intermediateKey = P256.Signing.PrivateKey(), leafKey = P256.Signing.PrivateKey()
        let now = Date()
        func name(_ common: String) throws -> DistinguishedName { try DistinguishedName { CommonName(common) } }
        func issue(_ subject: String, _ key: P256.Signing.PrivateKey, by issuer: String, _ issuerKey: P256.Signing.PrivateKey, ca: Bool) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + 86_400 * 30, issuer: try name(issuer), subject: try name(subject),
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(ca ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority)
                    if !ca { SubjectAlternativeNames([.dnsName("leaf.example.com")]) }
                },
                issuerPrivateKey: .init(issuerKey))
        }
        return (
            try issue("Bench Root", rootKey, by: "Bench Root", rootKey, ca: true),
            try issue("Bench Intermediate", intermediateKey, by: "Bench Root", rootKey, ca: true),
            try issue("leaf.example.com", leafKey, by: "Bench Intermediate", intermediateKey, ca: false)
        )
    }
}

/// A flag set on another task and read after it signalled.
private final class ValidFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    func set() { lock.withLock { flag = true } }
    var value: Bool { lock.withLock { flag } }
}
