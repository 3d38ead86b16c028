import KeychainModel
import KeychainProtocol

// The Secret Service, handed to a running daemon by `securityd --secret-service`.

extension Service.ServeSecretService: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        guard let frontEnd = daemon.secretService else {
            throw KeychainError(status: OSStatusCode.unimplemented, message: "this keychain's daemon does not serve the Secret Service")
        }
        try frontEnd.start(address: authorized.request.busAddress)
        return NoResult()
    }
}
