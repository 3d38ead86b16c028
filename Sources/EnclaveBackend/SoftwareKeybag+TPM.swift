import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

// Moving a keychain made before it had a TPM onto one (`security keychain-migrate --tpm`).

extension SoftwareKeybag {
    /// Moves the software device key into the TPM `tcti` names (else the configured one,
    /// else the kernel's resource manager) and, with a passcode, gives the passcode its
    /// dictionary-attack-protected TPM key; then deletes `device.key`.
    ///
    /// The device key goes in as it is (TPM2_Create with the caller's bytes, sent encrypted
    /// by the session): its MACs do not change, so the class D keys, the biometric
    /// enrollment and every item stay as they are, and each step leaves a keychain that
    /// opens — `device.tpm` written, the keybag replaced with its passcode classes under the
    /// TPM's passcode key, `device.key` unlinked. Running it again finishes what a crash cut.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong or missing passcode (throttled as an unlock);
    ///   `errSecNotAvailable` when no TPM answers; `errSecParam` when the keychain's device
    ///   key was made in a TPM already (nothing to move).
    public func migrateToTPM(tcti: String?, passcode: SecretBytes?) throws {
        let file = state.withLock { $0.file }
        var passcodeKeys: [ProtectionClass: ClassKey] = [:]
        var stretched: SecretBytes?
        if let kdf = file.passcodeKDF, file.passcodeKey == nil {
            guard let passcode else {
                throw KeychainError(status: OSStatusCode.authFailed, message: "the keychain password is required to move it onto the TPM")
            }
            passcodeKeys = try verifiedPasscodeKeys(file, passcode)
            stretched = try kdf.derive(passcode)
        }
        let softwarePath = directory + "/" + FileDeviceKey.fileName
        let tpmKey: TPMDeviceKey
        if let existing = deviceKey as? TPMDeviceKey {
            guard access(softwarePath, F_OK) == 0 || stretched != nil else {
                throw KeychainError.param("this keychain's device key is in a TPM already (\(existing.tcti))")
            }
            tpmKey = existing  // a migration a crash cut short
        } else {
            var configured: String?
            if case .tpm(let named) = configuration.deviceKeyBackend { configured = named }
            let target = tcti ?? configured ?? TPMDeviceKey.kernelTCTI
            guard let software = try DeviceKeyFile(path: softwarePath).loadExisting() else {
                throw KeychainError(status: OSStatusCode.io, message: "\(softwarePath) is gone: nothing to move")
            }
            tpmKey = try TPMDeviceKey(directory: directory, tcti: target, importing: software)
            // The TPM's key must be the file's: the same MAC over a probe; else undo.
            let probe = Data("trousseau device key migration probe".utf8)
            guard try tpmKey.authenticationCode(for: probe).isEqual(to: try deviceKey.authenticationCode(for: probe)) else {
                unlink(directory + "/" + TPMDeviceKey.fileName)
                throw KeychainError.decode("the TPM's device key is not this keychain's (\(TPMDeviceKey.fileName) was made by another attempt); it was removed")
            }
        }
        if let stretched {
            var changed = file
            changed.passcodeKey = try tpmKey.createPasscodeKey(auth: TPMPasscodeHalves(stretched).authValue)
            let wrapping = try passcodeWrappingKey(changed, stretched: stretched, deviceKey: tpmKey)
            for (protection, entry) in file.entries where entry.wrapping == .passcode {
                guard let key = passcodeKeys[protection] else { throw KeychainError.internalComponent }
                changed.entries[protection] = KeybagFile.Entry(
                    wrapping: .passcode,
                    wrappedKey: try wrapping.wrap(key, associatedData: changed.associatedData(for: protection, wrapping: .passcode)))
            }
            try changed.save(to: directory)
            state.withLock { $0.file = changed }
        }
        deviceKeyHolder.withLock { $0 = tpmKey }
        PrivateFile.syncDirectory(of: softwarePath)  // device.tpm and the keybag on the disk before device.key goes
        if unlink(softwarePath) != 0, errno != ENOENT {
            throw SystemCall.ioError("the keychain is on the TPM, but \(softwarePath) could not be removed")
        }
        PrivateFile.syncDirectory(of: softwarePath)
    }

    /// What holds the device key, and whether a move onto the TPM was cut short (both key
    /// files there: the passcode not yet behind the TPM's counter, the old key still on disk).
    var deviceKeySummary: String {
        let summary = deviceKey.summary
        guard deviceKey is TPMDeviceKey, access(directory + "/" + FileDeviceKey.fileName, F_OK) == 0 else { return summary }
        return summary + "; the move from software was cut short: run security keychain-migrate --tpm again"
    }
}
