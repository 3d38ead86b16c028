import KeychainModel
import KeychainProtocol
import KeyringFiles
import SecretService

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

extension Service.ImportKeyring: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.KeyringImportReport {
        let keyring = try GnomeKeyringFile.read(authorized.request.file, password: authorized.request.password)
        let outcome = try KeyringImport.run(keyring, into: daemon.store)
        return Service.KeyringImportReport(
            label: keyring.label, imported: UInt32(outcome.imported), updated: UInt32(outcome.updated), unchanged: UInt32(outcome.unchanged))
    }
}
