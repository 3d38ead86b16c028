public import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

#if canImport(Glibc)
import Glibc
#endif

extension SoftwareKeybag {
    /// Makes an escrow keybag of the class C keys (``EscrowKeybag``). With a keychain
    /// passcode set, it must be given (checked and throttled as an unlock).
    ///
    /// - Returns: the escrow's id and its secret, which only the agent keeps.
    public func createEscrow(passcode: SecretBytes?) throws -> (id: Data, secret: SecretBytes) {
        try requirePasscode(passcode, for: "an escrow keybag")
        let keys = state.withLock { $0.keys }
        let id = Self.randomBytes(16)
        let secret = SecretBytes(Self.randomBytes(32))
        let escrow = try EscrowKeybag(id: id, keys: keys, secret: secret, deviceKey: deviceKey)
        let folder = directory + "/" + EscrowKeybag.directoryName
        if mkdir(folder, 0o700) != 0, errno != EEXIST { throw PrivateFile.ioError("cannot create \(folder)") }
        try PrivateFile.replace(EscrowKeybag.path(in: directory, id: id), with: escrow.encoded)
        return (id, secret)
    }

    /// Opens class C with an escrow secret: before the first unlock the keychain becomes
    /// locked-after-first-unlock (class C and D available, class A and akpu not).
    ///
    /// - Throws: `errSecAuthFailed` for an unknown (revoked) escrow or a wrong secret.
    public func unlockWithEscrow(id: Data, secret: SecretBytes) throws {
        guard id.count == 16, let data = try PrivateFile.read(EscrowKeybag.path(in: directory, id: id)) else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "no such escrow keybag (revoked?)")
        }
        let keys = try EscrowKeybag(decoding: data).open(secret: secret, deviceKey: deviceKey)
        state.withLock { state in
            state.keys.merge(keys) { current, _ in current }
            if state.lockState == .beforeFirstUnlock { state.lockState = .locked }
        }
    }

    /// Revokes an escrow keybag: its secret opens nothing from now on.
    ///
    /// - Throws: `errSecItemNotFound` when there is no such escrow.
    public func revokeEscrow(id: Data) throws {
        guard id.count == 16, unlink(EscrowKeybag.path(in: directory, id: id)) == 0 else {
            throw KeychainError(status: OSStatusCode.itemNotFound, message: "no such escrow keybag")
        }
    }
}
