public import FoundationEssentials
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// The device's own 256-bit key, which never leaves its backend: the keybag only asks it
/// for MACs, to derive the key that wraps class D keys and to entangle the passcode with
/// the device. The software backend is ``FileDeviceKey``; a TPM's HMAC can implement the
/// same interface.
public protocol DeviceKey: Sendable {
    /// HMAC-SHA256 of `message` under the device key.
    func authenticationCode(for message: Data) throws -> SecretBytes
}
