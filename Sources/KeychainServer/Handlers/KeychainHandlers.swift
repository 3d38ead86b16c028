import EnclaveProtocol
import KeychainModel
import KeychainProtocol

// The keychain's lock state, passcode and settings: the enclave.

extension Service.KeychainStatusRequest: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.KeychainStatus {
        report(try daemon.enclave.status(), daemon)
    }

    /// What securityd says of the keychain, from what the enclave says of itself.
    static func report(_ status: EnclaveStatus, _ daemon: RequestDispatcher) -> Service.KeychainStatus {
        Service.KeychainStatus(
            lockState: status.keybag.lockState, hasPasscode: status.keybag.hasPasscode,
            autoLockSeconds: status.keybag.autoLockSeconds, failedUnlocks: status.keybag.failedUnlocks,
            memoryLocked: status.memoryLocked, changeCount: daemon.store.changeCount &+ daemon.fileKeychains.changeCount,
            deviceKey: status.deviceKey)
    }
}

extension Service.Unlock: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.unlock(passcode: authorized.request.passcode)
        return NoResult()
    }
}

extension Service.Lock: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.lock()
        return NoResult()
    }
}

extension Service.ChangePasscode: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        if try daemon.enclave.changePasscode(old: authorized.request.old, new: authorized.request.new) {
            try daemon.store.purge(.whenPasscodeSetThisDeviceOnly)
        }
        return NoResult()
    }
}

extension Service.MigrateToTPM: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.KeychainStatus {
        Service.KeychainStatusRequest.report(
            try daemon.enclave.migrateToTPM(tcti: authorized.request.tcti, passcode: authorized.request.passcode), daemon)
    }
}

extension Service.UpdateSettings: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.updateSettings(autoLockSeconds: authorized.request.autoLockSeconds)
        return NoResult()
    }
}

extension Service.Authenticate: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        // The enclave checks the evidence (and throttles passcodes as unlocks).
        try daemon.enclave.authenticate(authorized.request.request)
        return NoResult()
    }
}

extension Service.InvalidateAuthentication: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.invalidateAuthentication(context: authorized.request.context)
        return NoResult()
    }
}

extension Service.AuthenticationCapabilitiesRequest: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> AuthenticationCapabilities {
        try daemon.enclave.authenticationCapabilities()
    }
}
