import CodeSigning
import Crypto
public import Enclave
import FoundationEssentials
public import KeychainModel
public import KeychainStore

/// Carries out one request for one caller: SecItem calls on the store with the caller's
/// groups, keychain calls on the enclave. Every failure becomes an OSStatus response.
public struct RequestDispatcher: Sendable {
    let store: KeychainStore
    let enclave: EnclaveClient
    let localRoot: LocalDeveloperRoot

    /// - Parameter home: the keychain's home, where the local developer root is trusted.
    public init(store: KeychainStore, enclave: EnclaveClient, home: String) {
        self.store = store
        self.enclave = enclave
        self.localRoot = LocalDeveloperRoot(store: store, home: home)
    }

    public func respond(to request: ServiceRequest, from caller: Caller) -> ServiceResponse {
        do {
            return ServiceResponse(result: try perform(request, caller.accessGroups))
        } catch let error as KeychainError {
            return ServiceResponse(error: error)
        } catch {
            return ServiceResponse(error: KeychainError.internalComponent)
        }
    }

    private func perform(_ request: ServiceRequest, _ groups: AccessGroups) throws -> KeychainValue? {
        switch request {
        case .add(let query):
            return try store.add(query, caller: groups)
        case .copyMatching(let query):
            return try store.copyMatching(query, caller: groups)
        case .update(let query, let attributes):
            try store.update(query, attributes: attributes, caller: groups)
            return nil
        case .delete(let query):
            try store.delete(query, caller: groups)
            return nil
        case .keychainStatus:
            let status = try enclave.status()
            return .dictionary([
                "state": .number(Int64(status.keybag.lockState.rawValue)),
                "passcode": .bool(status.keybag.hasPasscode),
                "autoLockSeconds": .number(Int64(status.keybag.autoLockSeconds)),
                "failedUnlocks": .number(Int64(status.keybag.failedUnlocks)),
                "memoryLocked": .bool(status.memoryLocked),
            ])
        case .unlock(let passcode):
            try enclave.unlock(passcode: passcode)
            return nil
        case .lock:
            try enclave.lock()
            return nil
        case .changePasscode(let old, let new):
            if try enclave.changePasscode(old: old, new: new) {
                try store.purge(.whenPasscodeSetThisDeviceOnly)
            }
            return nil
        case .updateSettings(let autoLock):
            try enclave.updateSettings(autoLockSeconds: autoLock)
            return nil
        case .issueDeveloperCertificate(let team, let applicationGroups, let publicKey, let passcode):
            try requireUserPresence(passcode, for: "signing with the local developer root")
            guard let key = try? P256.Signing.PublicKey(rawRepresentation: publicKey) else {
                throw KeychainError(status: OSStatusCode.param, message: "the public key is not a raw P-256 key")
            }
            let (certificate, root) = try localRoot.issue(
                team: try TeamIdentifier(team), applicationGroups: applicationGroups, publicKey: key)
            return .dictionary([
                "certificate": .data(Data(try certificate.certificate.serializeAsDER())),
                "root": .data(Data(try root.certificate.serializeAsDER())),
            ])
        }
    }

    /// Once a passcode is set, an operation that needs the user's presence needs the
    /// passcode, verified (and throttled) by the enclave. Without one there is nobody to
    /// ask: any process of the user can read the device key anyway.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when a passcode is set and none was given,
    ///   `errSecAuthFailed` for a wrong one.
    private func requireUserPresence(_ passcode: SecretBytes?, for operation: String) throws {
        guard try enclave.status().keybag.hasPasscode else { return }
        guard let passcode else {
            throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "\(operation) needs the keychain password")
        }
        try enclave.unlock(passcode: passcode)
    }
}
