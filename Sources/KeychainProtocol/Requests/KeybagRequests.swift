public import FoundationEssentials
public import KeychainModel

// The requests securityd forwards to the enclave as they are (``KeybagCall``): who may
// send each.

extension Service {
    public typealias Unlock = KeybagCall.Unlock
    public typealias Lock = KeybagCall.Lock
    public typealias Authenticate = KeybagCall.Authenticate
    public typealias InvalidateAuthentication = KeybagCall.InvalidateAuthentication
    public typealias AuthenticationCapabilitiesRequest = KeybagCall.AuthenticationCapabilitiesRequest
    public typealias UnlockWithEscrow = KeybagCall.UnlockWithEscrow
    public typealias RevokeEscrow = KeybagCall.RevokeEscrow
    public typealias CreateEnclaveKey = KeybagCall.CreateEnclaveKey
    public typealias EnclaveKeyCreated = KeybagCall.EnclaveKeyCreated
    public typealias EnclaveKeyOutput = KeybagCall.EnclaveKeyOutput
}

extension KeybagCall.Unlock: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

extension KeybagCall.Lock: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

extension KeybagCall.Authenticate: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

extension KeybagCall.InvalidateAuthentication: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

extension KeybagCall.AuthenticationCapabilitiesRequest: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

/// Any caller: the escrow secret is the authority.
extension KeybagCall.UnlockWithEscrow: ServiceRequest {
    public static let authorization = Authorization.anyCaller
}

extension KeybagCall.RevokeEscrow: ServiceRequest {
    public static let authorization = Authorization.securityToolWithPresence(operation: "revoking an escrow keybag")
}

/// Any caller; the caller gets the key's blob.
extension KeybagCall.CreateEnclaveKey: ServiceRequest {
    public static let authorization = Authorization.anyCaller

    public func inContext(_ context: Data) -> Self {
        var request = self
        if request.context == nil { request.context = context }
        return request
    }
}
