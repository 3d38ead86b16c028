public import FoundationEssentials
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The device's own 256-bit key, which never leaves its backend: the keybag only asks it
/// for MACs, to derive the key that wraps class D keys and to entangle the passcode with
/// the device. The software backend is ``FileDeviceKey``; ``TPMDeviceKey`` keeps it in a
/// TPM 2.0.
public protocol DeviceKey: Sendable {
    /// HMAC-SHA256 of `message` under the device key.
    func authenticationCode(for message: Data) throws -> SecretBytes
    /// What holds the key, for `security show-keychain-info`.
    var summary: String { get }
}

/// Which backend holds a keychain's device key: chosen when the keychain is made, found
/// again from its files afterwards (`device.tpm` or `device.key`).
public enum DeviceKeyBackend: Sendable, Hashable {
    /// Software only: the 0600 device-key file.
    case off
    /// A TPM when one is reachable now (the kernel's resource manager, readable and
    /// writable by this user), else software.
    case automatic
    /// The TPM this TCTI names ("device:/dev/tpmrm0", "swtpm:path=…"); no fallback.
    case tpm(tcti: String)

    /// `TROUSSEAU_TPM`'s value: "off", "auto" (or empty), or a TCTI.
    public init(setting: String?) {
        switch setting ?? "" {
        case "", "auto": self = .automatic
        case "off": self = .off
        case let tcti: self = .tpm(tcti: tcti)
        }
    }

    /// The device key of the keychain in `directory`: the one it has, or a new one from
    /// this backend when it has none (and no keybag either).
    public func open(directory: String) throws -> any DeviceKey {
        let configured: String? = if case .tpm(let tcti) = self { tcti } else { nil }
        if TPMDeviceKey.exists(in: directory) { return try TPMDeviceKey(directory: directory, tcti: configured) }
        let hasSoftwareKey = access(directory + "/" + FileDeviceKey.fileName, F_OK) == 0
        let isNew = !hasSoftwareKey && access(directory + "/" + KeybagFile.fileName, F_OK) != 0
        switch self {
        case .tpm(let tcti) where isNew:
            return try TPMDeviceKey(directory: directory, tcti: tcti)
        case .automatic where isNew && access("/dev/tpmrm0", R_OK | W_OK) == 0:
            if let key = try? TPMDeviceKey(directory: directory, tcti: TPMDeviceKey.kernelTCTI) { return key }
            return try FileDeviceKey(directory: directory, note: "the TPM at \(TPMDeviceKey.kernelTCTI) did not answer when the keychain was made")
        default:
            // A new keychain lands here only with .off, or .automatic and no /dev/tpmrm0 to open.
            let reason = self == .off ? "TROUSSEAU_TPM=off" : "no TPM was reachable: /dev/tpmrm0 is missing or this user is not in group tss"
            return try FileDeviceKey(directory: directory, note: isNew ? reason : nil)
        }
    }
}
