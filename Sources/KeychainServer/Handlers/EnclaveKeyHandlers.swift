import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainProtocol

// Enclave keys: securityd passes them between the caller and the enclave; their private
// bytes never reach it. Any caller: the blob is the capability, and the enclave enforces
// the key's access control.

extension Service.CreateEnclaveKey: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.EnclaveKeyCreated {
        let request = authorized.request
        guard request.protection.isThisDeviceOnly else {
            throw KeychainError.param("an enclave key's protection is a ThisDeviceOnly class")
        }
        do {
            return Service.EnclaveKeyCreated(
                blob: try daemon.enclave.createEnclaveKey(protection: request.protection, access: request.access, context: request.context))
        } catch let error as KeychainError where error == .authNeeded {
            // Making the key needs only its application password, never the user's presence.
            guard let access = request.access else { throw error }
            var requirement = AuthenticationRequirement(access, operation: Data())
            requirement.factors = []
            requirement.requiredFactors = 0
            throw KeychainError(status: error.status, message: "the enclave key needs its application password", details: requirement.details)
        }
    }
}

extension Service.UseEnclaveKey: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.EnclaveKeyOutput {
        let request = authorized.request
        let blob = try EnclaveKeyBlob(data: request.blob)
        do {
            return Service.EnclaveKeyOutput(try daemon.enclave.useEnclaveKey(request.blob, request.operation, context: request.context))
        } catch let error as KeychainError where error == .authNeeded {
            // What to prove, and the operation a proof is bound to: as for an item.
            guard let access = blob.access else { throw error }
            let requirement = AuthenticationRequirement(access, operation: AccessBinding.operation(associatedData: blob.associatedData))
            throw KeychainError(status: error.status, message: "the enclave key needs the user's authentication", details: requirement.details)
        }
    }
}
