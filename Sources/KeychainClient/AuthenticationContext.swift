public import FoundationEssentials
public import KeychainModel
import KeychainProtocol
public import KeychainSystem

/// A context in which the user authenticates for items with an access control — what an
/// `LAContext` is to Apple's keychain. The enclave keeps the proofs; this holds the
/// context's id, its reuse window and the front end that asks the user.
///
/// Item calls made with a context ask the user when an item needs it (unless
/// ``interactionNotAllowed``), prove it to the enclave for that operation, and retry. A
/// call made without one gets a new context, used once.
public final class AuthenticationContext: Sendable {
    /// The id the enclave knows the context by (`kSecUseAuthenticationContext`).
    public let id: Data
    public let frontEnd: PresenceFrontEnd
    private struct Settings {
        var reuseSeconds: UInt32 = 0
        var interactionNotAllowed = false
    }

    private let settings = BlockingMutex(Settings())

    public init(frontEnd: PresenceFrontEnd = PresenceFrontEnd()) {
        var generator = SystemRandomNumberGenerator()
        var id = Data()
        while id.count < ItemQuery.authenticationContextSize { id.appendInteger(generator.next()) }
        self.id = id.prefix(ItemQuery.authenticationContextSize)
        self.frontEnd = frontEnd
    }

    /// How long a proof made in this context serves other operations (0: only its own;
    /// at most 300 seconds, Apple's `LATouchIDAuthenticationMaximumAllowableReuseDuration`).
    public var reuseSeconds: UInt32 {
        get { settings.withLock { $0.reuseSeconds } }
        set { settings.withLock { $0.reuseSeconds = min(newValue, AuthenticationRequest.maximumReuseSeconds) } }
    }

    /// When set, an item that needs the user fails with errSecInteractionNotAllowed instead.
    public var interactionNotAllowed: Bool {
        get { settings.withLock { $0.interactionNotAllowed } }
        set { settings.withLock { $0.interactionNotAllowed = newValue } }
    }

    /// Proves `factors` (as many as `required`; biometry first when the sensor can, then the
    /// passcode) to the enclave for `operation` (nil: the next operation).
    ///
    /// - Returns: the factors shown.
    /// - Throws: `errSecAuthFailed` for a wrong passcode, an unmatched finger, or factors
    ///   that cannot be shown here; `errSecUserCanceled` when the user cancels.
    @discardableResult
    public func prove(
        _ factors: [AccessControl.Factor], required: Int, operation: Data?, prompt: String, using client: KeychainClient
    ) throws -> [AccessControl.Factor] {
        guard !interactionNotAllowed else {
            throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the context does not allow interaction")
        }
        // One round trip (and a sensor query) only when a finger could be asked for.
        let biometric = !Set(factors).isDisjoint(with: [.biometryAny, .biometryCurrentSet])
        let capabilities = biometric ? try client.authenticationCapabilities() : nil
        let ordered = factors.sorted { $0 != .passcode && $1 == .passcode }
        var shown: [AccessControl.Factor] = []
        for factor in ordered where shown.count < required {
            let evidence: AuthenticationEvidence
            switch factor {
            case .biometryAny, .biometryCurrentSet:
                // With a passcode to fall back on, an absent sensor is no reason to fail.
                guard let capabilities, capabilities.biometryAvailable, capabilities.biometryEnrolled || required == factors.count
                else { continue }
                evidence = .biometry(reason: prompt)
            case .passcode:
                evidence = .passcode(try frontEnd.ask(for: .passcode, prompt: prompt))
            case .companion:
                continue
            }
            try client.call(Service.Authenticate(AuthenticationRequest(context: id, evidence: evidence, operation: operation, reuseSeconds: reuseSeconds)))
            shown.append(factor)
        }
        guard shown.count >= required else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "this machine cannot show what the item asks for")
        }
        return shown
    }

    /// Gives the enclave the application password for this context (nil forgets it).
    public func setApplicationPassword(_ password: SecretBytes?, using client: KeychainClient) throws {
        try client.call(Service.Authenticate(AuthenticationRequest(context: id, evidence: .applicationPassword(password))))
    }

    /// Forgets everything proven in this context.
    public func invalidate(using client: KeychainClient) throws {
        try client.call(Service.InvalidateAuthentication(context: id))
    }

    /// Satisfies what errSecAuthNeeded asked for: the application password (asked for
    /// when the context has none), then the factors not `tried` before — a factor shown
    /// that did not satisfy the enclave (a finger after the enrollment changed) falls back
    /// to the others.
    ///
    /// - Returns: the factors shown.
    func satisfy(
        _ requirement: AuthenticationRequirement, prompt: String, askPassword: Bool, tried: Set<AccessControl.Factor>,
        using client: KeychainClient
    ) throws -> [AccessControl.Factor] {
        if requirement.applicationPassword, askPassword {
            guard !interactionNotAllowed else {
                throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "the context does not allow interaction")
            }
            try setApplicationPassword(try frontEnd.ask(for: .applicationPassword, prompt: prompt), using: client)
        }
        guard !requirement.factors.isEmpty else { return [] }
        let untried = requirement.factors.filter { !tried.contains($0) }
        let required = requirement.requiredFactors == requirement.factors.count ? untried.count : requirement.requiredFactors
        guard !untried.isEmpty, untried.count >= required else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "what was shown does not satisfy the item's access control")
        }
        return try prove(untried, required: required, operation: requirement.operation, prompt: prompt, using: client)
    }
}

/// An object that carries an authentication context — `LAContext` — so that the Security
/// functions take it as `kSecUseAuthenticationContext`.
public protocol AuthenticationContextProviding: AnyObject {
    var authenticationContext: AuthenticationContext { get }
}

extension KeychainClient {
    /// What the enclave can check.
    public func authenticationCapabilities() throws -> AuthenticationCapabilities {
        try call(Service.AuthenticationCapabilitiesRequest())
    }

    /// Sends an item request in `context` (when nil, a new single-use one if an item turns
    /// out to need it); when an item's access control needs the user, asks them — unless the
    /// query says `kSecUseAuthenticationUIFail` or `Skip`, which the daemon applies — and
    /// sends it again.
    ///
    /// - Parameters:
    ///   - request: the item request.
    ///   - context: the context the request is sent in.
    ///   - prompt: what the user is told (`kSecUseOperationPrompt`).
    ///   - presence: the keychain passcode, sent as the user's presence.
    @discardableResult
    public func call<Request: ServiceRequest>(
        _ request: Request, in context: AuthenticationContext?, prompt: String? = nil, presence: SecretBytes? = nil
    ) throws -> Request.Response {
        var context = context
        var request = context.map { request.inContext($0.id) } ?? request
        let prompt = prompt ?? request.operationPrompt ?? "Authenticate to use a keychain item"
        var askedPassword = false
        var tried: Set<AccessControl.Factor> = []
        for _ in 0..<4 {  // the password, then each factor, at most
            do {
                return try call(request, presence: presence)
            } catch let error as KeychainError where error == .authNeeded {
                guard let requirement = AuthenticationRequirement(details: error.details) else { throw error }
                let current = context ?? AuthenticationContext()  // most requests never need one
                if context == nil {
                    context = current
                    request = request.inContext(current.id)
                }
                tried.formUnion(try current.satisfy(requirement, prompt: prompt, askPassword: !askedPassword, tried: tried, using: self))
                askedPassword = askedPassword || requirement.applicationPassword
            }
        }
        return try call(request, presence: presence)
    }
}
