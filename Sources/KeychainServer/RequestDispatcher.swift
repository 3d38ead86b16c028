public import Enclave
import FoundationEssentials
public import KeychainModel
public import KeychainStore

/// Carries out one request for one caller: SecItem calls on the store with the caller's
/// groups, keychain calls on the enclave. Every failure becomes an OSStatus response.
public struct RequestDispatcher: Sendable {
    let store: KeychainStore
    let enclave: EnclaveClient

    public init(store: KeychainStore, enclave: EnclaveClient) {
        self.store = store
        self.enclave = enclave
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
        }
    }
}
