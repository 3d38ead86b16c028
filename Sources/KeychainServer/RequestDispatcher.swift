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
            return ServiceResponse(result: try perform(request, caller, passcode: nil))
        } catch let error as KeychainError {
            return ServiceResponse(error: error)
        } catch {
            return ServiceResponse(error: KeychainError.internalComponent)
        }
    }

    /// - Parameter passcode: the keychain passcode the request came with, verified.
    private func perform(_ request: ServiceRequest, _ caller: Caller, passcode: SecretBytes?) throws -> KeychainValue? {
        let presence = passcode != nil
        switch request {
        case .withUserPresence(let passcode, let inner):
            try enclave.unlock(passcode: passcode)  // verifies, and is throttled, even when unlocked
            return try perform(inner, caller, passcode: passcode)
        case .add(let query):
            return try store.add(query, caller: try reach(of: caller, for: request, presence: presence))
        case .copyMatching(let query):
            return try store.copyMatching(query, caller: try reach(of: caller, for: request, presence: presence))
        case .update(let query, let attributes):
            try store.update(query, attributes: attributes, caller: try reach(of: caller, for: request, presence: presence))
            return nil
        case .delete(let query):
            try store.delete(query, caller: try reach(of: caller, for: request, presence: presence))
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
            try requireSecurityTool(caller, "changing the keychain password")
            if try enclave.changePasscode(old: old, new: new) {
                try store.purge(.whenPasscodeSetThisDeviceOnly)
            }
            return nil
        case .updateSettings(let autoLock):
            try requireSecurityTool(caller, "changing the keychain settings")
            try enclave.updateSettings(autoLockSeconds: autoLock)
            return nil
        case .authenticate(let authentication):
            // Any caller: the enclave checks the evidence (and throttles passcodes as unlocks).
            try enclave.authenticate(authentication)
            return nil
        case .invalidateAuthentication(let context):
            try enclave.invalidateAuthentication(context: context)
            return nil
        case .authenticationCapabilities:
            var encoded = Data()
            try enclave.authenticationCapabilities().encode(to: &encoded)
            return .data(encoded)
        case .createBackup(let path, let password):
            try requireSecurityTool(caller, "making backups")
            if !presence { try requirePresenceOnceAPasscodeIsSet("making a backup") }
            let report = try BackupService(store: store, enclave: enclave).create(at: path, password: password, passcode: passcode)
            return .dictionary([
                "backedUp": .number(Int64(report.backedUp)),
                "passcodeSetItems": .number(Int64(report.passcodeSetItems)),
                "applicationPasswordItems": .number(Int64(report.applicationPasswordItems)),
                "unreadable": .number(Int64(report.unreadable)),
            ])
        case .restoreBackup(let path, let password):
            try requireSecurityTool(caller, "restoring backups")
            let (report, sameDevice) = try BackupService(store: store, enclave: enclave).restore(from: path, password: password)
            return .dictionary([
                "restored": .number(Int64(report.restored)),
                "replaced": .number(Int64(report.replaced)),
                "keptExisting": .number(Int64(report.keptExisting)),
                "otherDeviceOnly": .number(Int64(report.otherDeviceOnly)),
                "otherDeviceEnrollment": .number(Int64(report.otherDeviceEnrollment)),
                "sameDevice": .bool(sameDevice),
            ])
        case .createEscrow:
            try requireSecurityTool(caller, "making escrow keybags")
            if !presence { try requirePresenceOnceAPasscodeIsSet("making an escrow keybag") }
            let (id, secret) = try enclave.createEscrow(passcode: passcode)
            return .dictionary(["id": .data(id), "secret": .data(secret.withUnsafeBytes { Data($0) })])
        case .unlockWithEscrow(let id, let secret):
            try enclave.unlockWithEscrow(id: id, secret: secret)
            return nil
        case .revokeEscrow(let id):
            try requireSecurityTool(caller, "revoking escrow keybags")
            if !presence { try requirePresenceOnceAPasscodeIsSet("revoking an escrow keybag") }
            try enclave.revokeEscrow(id: id)
            return nil
        case .issueDeveloperCertificate(let team, let applicationGroups, let publicKey):
            try requireSecurityTool(caller, "issuing developer certificates")
            if !presence { try requirePresenceOnceAPasscodeIsSet("signing with the local developer root") }
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

    private func requireSecurityTool(_ caller: Caller, _ operation: String) throws {
        guard caller.role == .securityTool else {
            throw KeychainError(status: OSStatusCode.missingEntitlement, message: "\(operation) is for the security tool")
        }
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
