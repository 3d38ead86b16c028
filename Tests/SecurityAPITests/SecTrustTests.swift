import Dispatch
import Foundation
import KeychainTestSupport
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

        /// Runs `security` on the shared keychain: trust settings change only through it.
        func security(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": SecurityAPI.sharedKeychain.home])
        }

        /// Writes a certificate of the chain to a file for the tool.
        func file(_ name: String, in directory: URL) throws -> String {
            let path = directory.appendingPathComponent(name + ".der").path
            try (SecCertificateCopyData(certificates[name]!) as Data).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// Evaluates leaf → intermediate with `policy` and no anchors of the caller's: the
        /// system's roots and the trust settings decide.
        func evaluateWithSettings(_ policy: SecPolicy, anchors: [String]? = nil) throws -> (Bool, Int?, String?, SecTrustResultType) {
            var trust: SecTrust?
            _ = SecTrustCreateWithCertificates([certificates["leaf"]!, certificates["intermediate"]!] as CFArray, policy, &trust)
            let created = try #require(trust)
            if let anchors { _ = SecTrustSetAnchorCertificates(created, anchors.map { certificates[$0]! } as CFArray) }
            var error: CFError?
            let trusted = SecTrustEvaluateWithError(created, &error)
            var result = SecTrustResultType.invalid
            _ = SecTrustGetTrustResult(created, &result)
            return (trusted, error.map { CFErrorGetCode($0) }, error.map { CFErrorCopyDescription($0) as String }, result)
        }

        @Test func trustSettingsAnchorARootAndADenyWins() throws {
            let directory = try OpenSSL.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let ssl = SecPolicyCreateSSL(true, "leaf.example.com" as CFString)
            #expect(try evaluateWithSettings(ssl).1 == -25318, "the test root is nobody's anchor yet, and not given: the chain stops")

            let root = try file("root", in: directory), intermediate = try file("intermediate", in: directory)
            let added = try security("add-trusted-cert", root)
            #expect(added.status == 0, "\(added.stderr)")
            let trusted = try evaluateWithSettings(ssl)
            #expect(trusted.0 && trusted.1 == nil && trusted.3 == .unspecified, "the user trusts the root: \(trusted)")

            // A deny for SSL on the intermediate: no SSL evaluation trusts the chain, not even
            // with the root as the caller's own anchor; other policies are not concerned.
            #expect(try security("add-trusted-cert", "-r", "deny", "-p", "ssl", intermediate).status == 0)
            let denied = try evaluateWithSettings(ssl)
            #expect(!denied.0 && denied.1 == -67654 && denied.3 == .deny)
            #expect(denied.2 == "User or administrator set “Test Intermediate” certificate as distrusted")
            #expect(try evaluateWithSettings(ssl, anchors: ["root"]).1 == -67654, "a deny wins over the caller's anchors")
            #expect(try evaluateWithSettings(SecPolicyCreateBasicX509()).0, "the deny is for SSL only")
            let weak = try evaluate(["weak", "intermediate"], ssl)
            #expect(weak.1 == -67735, "a broken key size outranks a deny, as Apple's checks are ordered")

            // trustRoot is for a self-signed certificate: Apple refuses it for another.
            let refused = try security("add-trusted-cert", "-r", "trustRoot", intermediate)
            #expect(refused.status == 1)
            #expect(refused.stderr == "SecTrustSettingsSetTrustSettings: One or more parameters passed to a function were not valid.\n")

            #expect(try security("remove-trusted-cert", intermediate).status == 0)
            #expect(try evaluateWithSettings(ssl).0)
            #expect(try security("remove-trusted-cert", root).status == 0)
            #expect(try evaluateWithSettings(ssl).1 == -25318, "removed: untrusted again")
            let again = try security("remove-trusted-cert", root)
            #expect(again.status == 1 && again.stderr == "SecTrustSettingsRemoveTrustSettings: The specified item could not be found in the keychain.\n")
        }

        /// A leaf whose signature does not verify, and a chain whose two CAs issued each
        /// other: not trusted, with an answer and no hang.
        @Test func aBrokenSignatureAndALoopAreNotTrusted() throws {
            var leaf = SecCertificateCopyData(certificates["leaf"]!) as Data
            leaf[leaf.count - 5] ^= 0x01  // inside the signature's value
            let tampered = try #require(SecCertificateCreateWithData(nil, leaf as CFData), "still DER")
            var trust: SecTrust?
            _ = SecTrustCreateWithCertificates([tampered, certificates["intermediate"]!] as CFArray, SecPolicyCreateBasicX509(), &trust)
            let created = try #require(trust)
            _ = SecTrustSetAnchorCertificates(created, [certificates["root"]!] as CFArray)
            var error: CFError?
            #expect(!SecTrustEvaluateWithError(created, &error))
            #expect(error.map(CFErrorGetCode) == -67843)

            let directory = try OpenSSL.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let made = try OpenSSL.execute("/usr/bin/python3", [SecKeyInteropTests.reference, "make-loop", directory.path])
            try #require(made.status == 0, "\(made.output)")
            let loop = try ["leaf", "a", "b"].map { name in
                try #require(SecCertificateCreateWithData(nil, try Data(contentsOf: directory.appendingPathComponent("loop-\(name).der")) as CFData))
            }
            var looped: SecTrust?
            _ = SecTrustCreateWithCertificates(loop as CFArray, SecPolicyCreateBasicX509(), &looped)
            let circular = try #require(looped)
            _ = SecTrustSetAnchorCertificates(circular, [certificates["root"]!] as CFArray)
            #expect(!SecTrustEvaluateWithError(circular, &error))
            #expect(error.map(CFErrorGetCode) == -25318, "the chain A → B → A reaches no anchor")
            #expect(SecTrustGetCertificateCount(circular) == 3, "each certificate once")
        }

        @Test func badArgumentsAreErrSecParam() {
            var trust: SecTrust?
            #expect(SecTrustCreateWithCertificates([] as CFArray, nil, &trust) == errSecParam)
            #expect(SecTrustCreateWithCertificates(["text"] as CFArray, nil, &trust) == errSecParam)
            #expect(SecTrustCreateWithCertificates(certificates["leaf"]!, ["not a policy"] as CFArray, &trust) == errSecParam)
        }
    }
}
