import Dispatch
import Foundation
import Security
import Testing

/// SecTrust as TLS code calls it (swift-nio-ssl, Alamofire, async-http-client): a chain made
/// by Python's `cryptography` (root → intermediate → leaf, and leaves that each fail one
/// check), evaluated by securityd with Apple's statuses and words.
extension SecurityAPI {
    @Suite struct SecTrustTests {
        let service = SecurityAPI.useSharedKeychain()
        let certificates: [String: SecCertificate]

        init() throws {
            let directory = try OpenSSL.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let made = try OpenSSL.execute("/usr/bin/python3", [SecKeyInteropTests.reference, "make-chain", directory.path])
            try #require(made.status == 0, "\(made.output)")
            var certificates: [String: SecCertificate] = [:]
            for name in ["root", "intermediate", "leaf", "expired", "weak", "client", "other-root"] {
                let data = try Data(contentsOf: directory.appendingPathComponent(name + ".der"))
                certificates[name] = try #require(SecCertificateCreateWithData(nil, data as CFData), "\(name)")
            }
            self.certificates = certificates
        }

        /// Evaluates `chain` (names, leaf first) with `policy` and `anchors` only; the error's code.
        func evaluate(_ chain: [String], _ policy: SecPolicy, anchors: [String] = ["root"]) throws -> (Bool, Int?, String?) {
            var trust: SecTrust?
            #expect(SecTrustCreateWithCertificates(chain.map { certificates[$0]! } as CFArray, policy, &trust) == errSecSuccess)
            let created = try #require(trust)
            #expect(SecTrustSetAnchorCertificates(created, anchors.map { certificates[$0]! } as CFArray) == errSecSuccess)
            var error: CFError?
            let trusted = SecTrustEvaluateWithError(created, &error)
            return (trusted, error.map { CFErrorGetCode($0) }, error.map { CFErrorCopyDescription($0) as String })
        }

        @Test func aChainToTheAnchorIsTrusted() throws {
            let ssl = SecPolicyCreateSSL(true, "leaf.example.com" as CFString)
            let (trusted, code, _) = try evaluate(["leaf", "intermediate"], ssl)
            #expect(trusted && code == nil)
            #expect(try evaluate(["leaf", "intermediate"], SecPolicyCreateSSL(true, "127.0.0.1" as CFString)).0, "an IP address matches its IP name")
            #expect(try evaluate(["leaf", "intermediate"], SecPolicyCreateBasicX509()).0)

            var trust: SecTrust?
            _ = SecTrustCreateWithCertificates([certificates["leaf"]!, certificates["intermediate"]!] as CFArray, ssl, &trust)
            let created = try #require(trust)
            _ = SecTrustSetAnchorCertificates(created, [certificates["root"]!] as CFArray)
            #expect(SecTrustEvaluateWithError(created, nil))
            let chain = try #require(SecTrustCopyCertificateChain(created) as? [Data])
            #expect(chain == ["leaf", "intermediate", "root"].map { SecCertificateCopyData(certificates[$0]!) as Data })
            #expect(SecTrustGetCertificateCount(created) == 3)
            var result = SecTrustResultType.invalid
            #expect(SecTrustGetTrustResult(created, &result) == errSecSuccess && result == .unspecified)
            #expect(SecTrustCopyKey(created) == SecCertificateCopyKey(certificates["leaf"]!))
            #expect(CFGetTypeID(created) == SecTrustGetTypeID() && CFGetTypeID(ssl) == SecPolicyGetTypeID())
        }

        @Test func eachFailureHasApplesCodeAndWords() throws {
            let ssl = SecPolicyCreateSSL(true, "leaf.example.com" as CFString)
            let wrongName = try evaluate(["leaf", "intermediate"], SecPolicyCreateSSL(true, "other.example.com" as CFString))
            #expect(!wrongName.0 && wrongName.1 == -67602)  // errSecHostNameMismatch
            #expect(wrongName.2 == "“leaf.example.com” certificate name does not match input")
            let expired = try evaluate(["expired", "intermediate"], SecPolicyCreateSSL(true, nil))
            #expect(!expired.0 && expired.1 == -67818)  // errSecCertificateExpired
            #expect(expired.2 == "“expired.example.com” certificate is expired")
            let missing = try evaluate(["leaf"], ssl)
            #expect(!missing.0 && missing.1 == -25318)  // errSecCreateChainFailed
            let untrusted = try evaluate(["leaf", "intermediate"], ssl, anchors: ["other-root"])
            #expect(!untrusted.0 && untrusted.1 == -67843)  // errSecNotTrusted
            #expect(untrusted.2 == "“Test Root” certificate is not trusted")
            let weak = try evaluate(["weak", "intermediate"], SecPolicyCreateSSL(true, "leaf.example.com" as CFString))
            #expect(!weak.0 && weak.1 == -67735, "\(weak)")  // errSecUnsupportedKeySize, ahead of the name
            let client = try evaluate(["client", "intermediate"], SecPolicyCreateSSL(true, nil))
            #expect(!client.0 && client.1 == -67609)  // errSecInvalidExtendedKeyUsage
            #expect(try evaluate(["client", "intermediate"], SecPolicyCreateSSL(false, nil)).0, "a client certificate for a client")
        }

        @Test func theVerifyDateAndTheAnchorRulesAreApples() throws {
            var trust: SecTrust?
            _ = SecTrustCreateWithCertificates([certificates["expired"]!, certificates["intermediate"]!] as CFArray, SecPolicyCreateBasicX509(), &trust)
            let created = try #require(trust)
            _ = SecTrustSetAnchorCertificates(created, [certificates["root"]!] as CFArray)
            #expect(!SecTrustEvaluateWithError(created, nil))
            _ = SecTrustSetVerifyDate(created, Date(timeIntervalSinceNow: -25 * 86_400) as CFDate)
            #expect(SecTrustEvaluateWithError(created, nil), "valid at the date asked for")
            // Before its validity period: Apple's TemporalValidity check, which reports
            // errSecCertificateExpired on either side of the period.
            _ = SecTrustSetVerifyDate(created, Date(timeIntervalSinceNow: -35 * 86_400) as CFDate)
            var early: CFError?
            #expect(!SecTrustEvaluateWithError(created, &early))
            #expect(early.map(CFErrorGetCode) == -67818)
            #expect(early.map { CFErrorCopyDescription($0) as String } == "“expired.example.com” certificate is expired")

            // The system roots do not include our test root; with it as an extra anchor
            // (AnchorCertificatesOnly false, as swift-nio-ssl does) it is trusted too.
            var other: SecTrust?
            _ = SecTrustCreateWithCertificates([certificates["leaf"]!, certificates["intermediate"]!] as CFArray, SecPolicyCreateSSL(true, "leaf.example.com" as CFString), &other)
            let second = try #require(other)
            var error: CFError?
            #expect(!SecTrustEvaluateWithError(second, &error), "no anchor of ours: the system roots do not know its root")
            #expect(error.map(CFErrorGetCode) == -25318, "the chain stops at an intermediate whose issuer is nowhere")
            _ = SecTrustSetAnchorCertificates(second, [certificates["root"]!] as CFArray)
            _ = SecTrustSetAnchorCertificatesOnly(second, false)
            #expect(SecTrustEvaluateWithError(second, nil))
        }

        @Test func asyncEvaluationAnswersOnTheQueueItWasGiven() async throws {
            var trust: SecTrust?
            _ = SecTrustCreateWithCertificates([certificates["leaf"]!, certificates["intermediate"]!] as CFArray, SecPolicyCreateSSL(true, "leaf.example.com" as CFString), &trust)
            let created = try #require(trust)
            _ = SecTrustSetAnchorCertificates(created, [certificates["root"]!] as CFArray)
            let queue = DispatchQueue(label: "trust-callback")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let (trusted, onQueue) = await withCheckedContinuation { continuation in
                _ = SecTrustEvaluateAsyncWithError(created, queue) { _, trusted, _ in
                    continuation.resume(returning: (trusted, DispatchQueue.getSpecific(key: key) == true))
                }
            }
            #expect(trusted && onQueue)
        }

        @Test func badArgumentsAreErrSecParam() {
            var trust: SecTrust?
            #expect(SecTrustCreateWithCertificates([] as CFArray, nil, &trust) == errSecParam)
            #expect(SecTrustCreateWithCertificates(["text"] as CFArray, nil, &trust) == errSecParam)
            #expect(SecTrustCreateWithCertificates(certificates["leaf"]!, ["not a policy"] as CFArray, &trust) == errSecParam)
        }
    }
}
