public import FoundationEssentials
import KeychainCrypto
import KeychainModel
public import Keybag

/// Serves the enclave protocol for one keybag on one connection, until the peer closes it.
public struct EnclaveServer: Sendable {
    let keybag: SoftwareKeybag
    let memoryLocked: Bool

    public init(keybag: SoftwareKeybag, memoryLocked: Bool) {
        self.keybag = keybag
        self.memoryLocked = memoryLocked
    }

    /// Answers requests on `fd` until end of stream. A malformed request gets an error
    /// response and ends the connection: only the daemon talks to the enclave, so it is a bug.
    public func serve(fd: Int32) {
        FrameIO.serve(fd, maximumSize: EnclaveWire.maximumFrameSize, failure: EnclaveWire.failure) { frame in
            respond(to: try EnclaveWire.decodeRequest(frame))
        }
    }

    /// The response to one request.
    public func respond(to request: EnclaveRequest) -> Data {
        do {
            switch request {
            case .status:
                let status = keybag.status()
                var body = Data([status.lockState.rawValue, status.hasPasscode ? 1 : 0])
                body.appendInteger(status.autoLockSeconds)
                body.appendInteger(status.failedUnlocks)
                body.append(memoryLocked ? 1 : 0)
                return EnclaveWire.success(body)
            case .unlock(let passcode):
                try keybag.unlock(passcode: passcode)
                return EnclaveWire.success()
            case .lock:
                keybag.lock()
                return EnclaveWire.success()
            case .changePasscode(let old, let new):
                let destroyed = try keybag.changePasscode(old: old, new: new)
                return EnclaveWire.success(Data([destroyed ? 1 : 0]))
            case .updateSettings(let autoLock, let erase):
                try keybag.updateSettings(autoLockSeconds: autoLock, eraseAfterFailures: erase)
                return EnclaveWire.success()
            case .indexKey:
                return EnclaveWire.success(Self.bytes(try keybag.indexKey().secretBytes))
            case .metadataKey(let protection):
                return EnclaveWire.success(Self.bytes(try keybag.metadataKey(for: protection).secretBytes))
            case .wrapItemKey(let protection, let itemKey, let associatedData, let access, let context):
                let (wrapped, bound) = try keybag.wrapItemKey(
                    itemKey, for: protection, associatedData: associatedData, access: access, context: context)
                var body = Data()
                body.appendLengthPrefixed(wrapped)
                EnclaveWire.appendAccess(bound, context: nil, to: &body)
                return EnclaveWire.success(body)
            case .unwrapItemKey(let protection, let wrapped, let associatedData, let access, let context):
                let itemKey = try keybag.unwrapItemKey(
                    wrapped, for: protection, associatedData: associatedData, access: access, context: context)
                return EnclaveWire.success(Self.bytes(itemKey.secretBytes))
            case .authenticate(let request):
                try keybag.authenticate(request)
                return EnclaveWire.success()
            case .invalidateAuthentication(let context):
                keybag.presence.invalidate(context: context)
                return EnclaveWire.success()
            case .authenticationCapabilities:
                var body = Data()
                try keybag.capabilities().encode(to: &body)
                return EnclaveWire.success(body)
            case .beginBackup(let password, let passcode):
                let (session, header, integrityKey) = try keybag.beginBackup(password: password, passcode: passcode)
                var body = Data()
                body.appendLengthPrefixed(session)
                body.appendSecret(integrityKey.secretBytes)
                header.appendHeader(to: &body)
                return EnclaveWire.success(body)
            case .openBackup(let header, let password):
                let (session, integrityKey, sameDevice, classes) = try keybag.openBackup(header, password: password)
                var body = Data()
                body.appendLengthPrefixed(session)
                body.appendSecret(integrityKey.secretBytes)
                body.append(sameDevice ? 1 : 0)
                body.append(UInt8(classes.count))
                for protection in classes { body.appendLengthPrefixed(Data(protection.rawValue.utf8)) }
                return EnclaveWire.success(body)
            case .backupMetadataKey(let session, let protection):
                return EnclaveWire.success(Self.bytes(try keybag.backupMetadataKey(session: session, for: protection).secretBytes))
            case .exportSecret(let session, let protection, let blob, let rowAssociatedData, let recordAssociatedData):
                return EnclaveWire.success(try keybag.exportSecret(
                    session: session, blob, protection: protection, rowAssociatedData: rowAssociatedData,
                    recordAssociatedData: recordAssociatedData))
            case .importSecret(let session, let protection, let blob, let recordAssociatedData, let rowAssociatedData):
                return EnclaveWire.success(try keybag.importSecret(
                    session: session, blob, protection: protection, recordAssociatedData: recordAssociatedData,
                    rowAssociatedData: rowAssociatedData))
            case .endBackup(let session):
                keybag.endBackup(session: session)
                return EnclaveWire.success()
            case .createEscrow(let passcode):
                let (id, secret) = try keybag.createEscrow(passcode: passcode)
                var body = Data()
                body.appendLengthPrefixed(id)
                body.appendSecret(secret)
                return EnclaveWire.success(body)
            case .unlockWithEscrow(let id, let secret):
                try keybag.unlockWithEscrow(id: id, secret: secret)
                return EnclaveWire.success()
            case .revokeEscrow(let id):
                try keybag.revokeEscrow(id: id)
                return EnclaveWire.success()
            }
        } catch let error as KeychainError {
            return EnclaveWire.failure(error)
        } catch {
            return EnclaveWire.failure(KeychainError.internalComponent)
        }
    }

    private static func bytes(_ secret: SecretBytes) -> Data {
        secret.withUnsafeBytes { Data($0) }
    }
}
