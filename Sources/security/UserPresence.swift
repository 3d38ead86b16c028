import KeychainClient
import KeychainModel

extension KeychainClient {
    /// Sends `request`; when securityd answers that it needs the user's presence (another
    /// application's item, or the local developer root, once a keychain password is set),
    /// asks for the keychain password once and sends the request again with it.
    @discardableResult
    func callWithPresence(_ request: ServiceRequest, purpose: String = "access another application's items") throws -> KeychainValue? {
        do {
            return try call(request)
        } catch let error as KeychainError where error.status == OSStatusCode.interactionRequired {
            let passcode = PasswordPrompt.read("password to \(purpose) in \(KeychainLocation.databasePath): ")
            return try call(.withUserPresence(passcode: passcode, request))
        }
    }
}
