public import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// The enclave's record of who showed presence: authentication contexts (an `LAContext`
/// each, named by a random id), the proofs the enclave issued to them after checking a
/// passcode or a scan on the sensor it trusts, and the application passwords set on them.
/// An access-controlled item key is unwrapped only when its context's proofs satisfy the
/// item's access control.
///
/// A proof is bound to the operation it was made for (or, made without one, to the next
/// operation that uses it) and is used once; with a reuse window it serves any operation
/// of its context until the window ends.
public final class PresenceAuthority: Sendable {
    struct Proof {
        /// `.passcode` or `.biometryAny`.
        var factor: AccessControl.Factor
        /// For biometry: the enrollment digest when the finger matched.
        var enrollment: Data
        var operation: Data?
        var issued: Double
        var reuseSeconds: Double
        var used = false
    }

    struct Context {
        var proofs: [Proof] = []
        var applicationPassword: SecretBytes?
    }

    /// How long a single-use proof waits for its operation.
    static let singleUseLifetime: Double = 60
    /// Contexts kept at most; the oldest are forgotten first.
    static let maximumContexts = 1024

    let sensor: (any BiometricSensor)?
    private let enrollmentKey: SecretBytes
    private let clock: @Sendable () -> Double
    private let contexts = BlockingMutex<[Data: Context]>([:])

    /// - Parameters:
    ///   - enrollmentKey: keys the enrollment digests (derived from the device key).
    public init(sensor: (any BiometricSensor)?, enrollmentKey: SecretBytes, clock: @escaping @Sendable () -> Double) {
        self.sensor = sensor
        self.enrollmentKey = enrollmentKey
        self.clock = clock
    }

    /// The digest of the current enrollment; empty without a sensor or an enrolled finger.
    public func enrollmentDigest() throws -> Data {
        guard let sensor else { return Data() }
        return AccessBinding.enrollmentDigest(templates: try sensor.enrolledTemplates(), key: enrollmentKey)
    }

    /// Scans on the sensor and records a biometric proof for `request`'s context.
    ///
    /// - Throws: `errSecNotAvailable` without a sensor, `errSecAuthFailed` with no finger
    ///   enrolled or for a finger that does not match, `errSecUserCanceled` when the user
    ///   cancelled or nobody touched the sensor.
    func scan(for request: AuthenticationRequest, reason: String) throws {
        guard let sensor else { throw KeychainError(status: OSStatusCode.notAvailable, message: "no biometric sensor is available") }
        let enrollment = try enrollmentDigest()
        guard !enrollment.isEmpty else { throw KeychainError(status: OSStatusCode.authFailed, message: "no finger is enrolled") }
        switch try sensor.scan(reason: reason) {
        case .match:
            record(.biometryAny, enrollment: enrollment, for: request)
        case .noMatch:
            throw KeychainError(status: OSStatusCode.authFailed, message: "the finger did not match")
        case .cancelled:
            throw KeychainError(status: OSStatusCode.userCanceled, message: "the user cancelled the scan")
        }
    }

    /// Records a proof of `factor` (already checked) for `request`'s context.
    func record(_ factor: AccessControl.Factor, enrollment: Data = Data(), for request: AuthenticationRequest) {
        let proof = Proof(
            factor: factor, enrollment: enrollment, operation: request.operation, issued: clock(),
            reuseSeconds: Double(min(request.reuseSeconds, AuthenticationRequest.maximumReuseSeconds)))
        update(request.context) { $0.proofs.append(proof) }
    }

    /// Sets (or, with nil, forgets) the application password of a context.
    func setApplicationPassword(_ password: SecretBytes?, context: Data) {
        update(context) { $0.applicationPassword = password }
    }

    /// The application password set on `context`.
    func applicationPassword(context: Data?) -> SecretBytes? {
        guard let context else { return nil }
        return contexts.withLock { $0[context]?.applicationPassword }
    }

    /// Forgets a context and everything proven in it.
    public func invalidate(context: Data) {
        _ = contexts.withLock { $0.removeValue(forKey: context) }
    }

    /// Checks that `context` has proven what `access` asks for `operation`, using up the
    /// single-use proofs it relies on.
    ///
    /// - Throws: `errSecAuthFailed` when the access control asks for the enrollment it was
    ///   bound to and the enrollment changed (for good: no proof can help);
    ///   `errSecAuthNeeded` when the proofs are missing, used or expired.
    public func authorize(_ access: AccessControl, operation: Data, context: Data?) throws {
        guard !access.factors.isEmpty else { return }
        let enrollment = access.factors.contains(.biometryCurrentSet) ? try enrollmentDigest() : Data()
        let enrollmentChanged = access.factors.contains(.biometryCurrentSet) && enrollment != access.enrollment
        if enrollmentChanged, !access.survivesEnrollmentChange {
            throw KeychainError(
                status: OSStatusCode.authFailed, message: "the biometric enrollment changed since the item was added")
        }
        let now = clock()
        let authorized = contexts.withLock { contexts -> Bool in
            guard let context, var entry = contexts[context] else { return false }
            entry.proofs.removeAll { proof in
                proof.reuseSeconds > 0 ? now - proof.issued > proof.reuseSeconds : proof.used || now - proof.issued > Self.singleUseLifetime
            }
            var shown: Set<AccessControl.Factor> = []
            var relied: [Int] = []
            for (index, proof) in entry.proofs.enumerated() {
                let reusable = proof.reuseSeconds > 0
                guard reusable || proof.operation == nil || proof.operation == operation else { continue }
                switch proof.factor {
                case .passcode: shown.insert(.passcode)
                case .biometryAny:
                    shown.insert(.biometryAny)
                    if !enrollmentChanged, proof.enrollment == access.enrollment { shown.insert(.biometryCurrentSet) }
                default: continue
                }
                if !reusable { relied.append(index) }
            }
            guard access.isSatisfied(by: shown) else {
                contexts[context] = entry
                return false
            }
            for index in relied { entry.proofs[index].used = true }
            contexts[context] = entry
            return true
        }
        guard authorized else {
            throw KeychainError(status: OSStatusCode.authNeeded, message: "the item needs the user's authentication")
        }
    }

    private func update(_ context: Data, _ change: (inout Context) -> Void) {
        contexts.withLock { contexts in
            if contexts[context] == nil, contexts.count >= Self.maximumContexts {
                contexts.removeAll()  // a flood of contexts; their owners authenticate again
            }
            change(&contexts[context, default: Context()])
        }
    }
}
