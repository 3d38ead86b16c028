import EnclaveProtocol
import KeychainModel
import KeychainProtocol
import KeychainCallers

/// A request that passed its ``Authorization`` check; handlers take nothing else. Only
/// ``RequestDispatcher/authorize(_:from:presence:)`` makes one.
struct Authorized<Request: ServiceRequest> {
    let request: Request
    let caller: Caller
    /// The keychain passcode the request came with, verified by the enclave: the user's
    /// presence. Nil without it.
    let presence: SecretBytes?

    fileprivate init(request: Request, caller: Caller, presence: SecretBytes?) {
        self.request = request
        self.caller = caller
        self.presence = presence
    }
}

extension RequestDispatcher {
    /// Checks `Request.authorization` for `caller`, then the user's presence when the
    /// request carries it.
    ///
    /// - Throws: in the System keychain, `errSecWrPerm` or `errSecInteractionNotAllowed`
    ///   for what only root may do (``SystemKeychainPolicy``);
    ///   `errSecMissingEntitlement` for a caller the rule does not admit;
    ///   `errSecAuthFailed` (throttled, as unlocks are) for a wrong passcode;
    ///   `errSecInteractionRequired` when the rule asks for the user's presence, a passcode
    ///   is set, and the request came without it.
    func authorize<Request: ServiceRequest>(_ request: Request, from caller: Caller, presence: SecretBytes?) throws -> Authorized<Request> {
        try SystemKeychainPolicy.admit(request, from: caller, scope: scope)
        let toolOnly: String?
        let needsPresence: Bool
        switch Request.authorization {
        case .anyCaller: (toolOnly, needsPresence) = (nil, false)
        case .securityTool(let operation): (toolOnly, needsPresence) = (operation, false)
        case .securityToolWithPresence(let operation): (toolOnly, needsPresence) = (operation, true)
        }
        if let operation = toolOnly, !caller.role.hasSecurityToolReach {
            throw KeychainError(status: OSStatusCode.missingEntitlement, message: "\(operation) is for the security tool")
        }
        if let presence {
            try enclave.unlock(passcode: presence)  // verifies, and is throttled, even when unlocked
        } else if needsPresence, let operation = toolOnly {
            try requirePresenceOnceAPasscodeIsSet(operation)
        }
        return Authorized(request: request, caller: caller, presence: presence)
    }

    /// Without the user's presence: refused once a passcode is set. Without a passcode
    /// there is nobody to ask, and any process of the user can read the device key anyway.
    ///
    /// - Throws: `errSecInteractionRequired` when a passcode is set.
    func requirePresenceOnceAPasscodeIsSet(_ operation: String) throws {
        guard try enclave.status().keybag.hasPasscode else { return }
        throw KeychainError(status: OSStatusCode.interactionRequired, message: "\(operation) needs the keychain password")
    }
}
