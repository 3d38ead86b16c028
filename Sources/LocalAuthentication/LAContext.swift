import Dispatch
import Foundation
public import KeychainClient
import KeychainModel
import Security

/// A context in which the user authenticates, as Apple's `LAContext`: evaluate a policy
/// (the keychain passcode, typed on the terminal or in the passcode agent; a finger on the
/// sensor the enclave trusts), then pass the context to a keychain query as
/// `kSecUseAuthenticationContext` so the query does not ask again.
///
/// The enclave holds what the context proved. A proof serves one keychain operation, or
/// every operation of the context for ``touchIDAuthenticationAllowableReuseDuration``
/// seconds; ``invalidate()`` forgets it.
open class LAContext: NSObject, AuthenticationContextProviding, @unchecked Sendable {
    // @unchecked: the mutable settings live in `authenticationContext` and `state`, both locked.
    public let authenticationContext = AuthenticationContext()
    private let state = BlockingMutex(State())
    private let keychain: Keychain

    private struct State {
        var invalidated = false
        var applicationPasswordSet = false
        var localizedReason = ""
    }

    public override init() {
        keychain = TrousseauKeychain.current
        super.init()
    }

    /// How long a proof serves other operations, in seconds (at most 300).
    open var touchIDAuthenticationAllowableReuseDuration: Double {
        get { Double(authenticationContext.reuseSeconds) }
        set { authenticationContext.reuseSeconds = UInt32(max(0, min(newValue, LATouchIDAuthenticationMaximumAllowableReuseDuration))) }
    }

    /// When true, keychain queries in this context fail (errSecInteractionNotAllowed)
    /// rather than ask, and so does evaluating a policy.
    open var interactionNotAllowed: Bool {
        get { authenticationContext.interactionNotAllowed }
        set { authenticationContext.interactionNotAllowed = newValue }
    }

    /// The reason shown when a keychain query in this context asks the user.
    open var localizedReason: String {
        get { state.withLock { $0.localizedReason } }
        set { state.withLock { $0.localizedReason = newValue } }
    }

    open var localizedFallbackTitle: String?
    open var localizedCancelTitle: String?

    /// `.touchID` when the enclave trusts a fingerprint sensor.
    open var biometryType: LABiometryType {
        ((try? keychain.authenticationCapabilities())?.biometryAvailable ?? false) ? .touchID : .none
    }

    /// A digest of the biometric enrollment; it changes when a finger is added or removed.
    open var evaluatedPolicyDomainState: Data? {
        guard let state = try? keychain.authenticationCapabilities().enrollmentState, !state.isEmpty else { return nil }
        return state
    }

    /// Whether `policy` can be evaluated now.
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        let problem: LAError.Code?
        if state.withLock({ $0.invalidated }) {
            problem = .invalidContext
        } else if let capabilities = try? keychain.authenticationCapabilities() {
            switch policy {
            case .deviceOwnerAuthentication:
                problem = capabilities.passcodeSet || capabilities.biometryEnrolled ? nil : .passcodeNotSet
            case .deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthenticationWithBiometricsOrWatch:
                problem = !capabilities.biometryAvailable ? .biometryNotAvailable : capabilities.biometryEnrolled ? nil : .biometryNotEnrolled
            case .deviceOwnerAuthenticationWithWatch:
                problem = .watchNotAvailable
            }
        } else {
            problem = .biometryNotAvailable
        }
        if let problem { error?.pointee = LAError(problem) as NSError }
        return problem == nil
    }

    /// Asks the user to show what `policy` asks for; `reply` gets the outcome on another thread.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            do {
                try evaluate(policy, localizedReason: localizedReason)
                reply(true, nil)
            } catch {
                reply(false, error)
            }
        }
    }

    /// Asks the user to show what `policy` asks for.
    ///
    /// - Throws: ``LAError``.
    @discardableResult
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            evaluatePolicy(policy, localizedReason: localizedReason) { success, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: success) }
            }
        }
    }

    private func evaluate(_ policy: LAPolicy, localizedReason: String) throws {
        guard !state.withLock({ $0.invalidated }) else { throw LAError(.invalidContext) }
        let factors: [AccessControl.Factor]
        switch policy {
        case .deviceOwnerAuthentication: factors = [.biometryAny, .passcode]
        case .deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthenticationWithBiometricsOrWatch: factors = [.biometryAny]
        case .deviceOwnerAuthenticationWithWatch: throw LAError(.watchNotAvailable)
        }
        var problem: NSError?
        guard canEvaluatePolicy(policy, error: &problem) else { throw LAError(LAError.Code(rawValue: problem?.code ?? -1) ?? .authenticationFailed) }
        do {
            try keychain.prove(factors, required: 1, in: authenticationContext, prompt: localizedReason)
        } catch {
            throw LAError(error)
        }
    }

    /// Sets the application password items with `.applicationPassword` ask for (nil
    /// removes it).
    @discardableResult
    open func setCredential(_ credential: Data?, type: LACredentialType) -> Bool {
        do {
            try keychain.setApplicationPassword(credential.map { SecretBytes($0) }, in: authenticationContext)
            state.withLock { $0.applicationPasswordSet = credential != nil }
            return true
        } catch {
            return false
        }
    }

    /// Whether a credential of `type` is set.
    open func isCredentialSet(_ type: LACredentialType) -> Bool {
        state.withLock { $0.applicationPasswordSet }
    }

    /// Forgets what this context proved; evaluating it again fails with `invalidContext`.
    open func invalidate() {
        state.withLock { $0.invalidated = true }
        try? keychain.invalidate(authenticationContext)
    }
}
