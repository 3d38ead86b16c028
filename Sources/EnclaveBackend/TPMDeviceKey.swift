public import FoundationEssentials
import Crypto
import KeychainCrypto
public import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The device key in a TPM 2.0: a TPM-generated HMAC-SHA256 key under the TPM's storage
/// root key (noDA, empty authValue: class D keys need it with no passcode), of which the
/// keychain keeps only the TPM's wrapped blob, `KEYCHAIN_HOME/device.tpm`. The blob is
/// useless without this TPM: a copy of the home directory cannot be read elsewhere.
///
/// With a passcode, the keybag also keeps a second TPM key, dictionary-attack protected,
/// whose authValue is half the passcode's scrypt output (``passcodeAuthenticationCode(key:auth:message:)``):
/// a wrong passcode counts in the TPM's own lockout counter, which deleting files cannot reset.
public final class TPMDeviceKey: DeviceKey {
    /// The blob file's name inside `KEYCHAIN_HOME`.
    public static let fileName = "device.tpm"
    /// The TCTI of the kernel's resource manager (readable by group `tss`).
    public static let kernelTCTI = "device:/dev/tpmrm0"

    /// The TCTI this keychain reaches its TPM through.
    public let tcti: String
    private let record: TPMDeviceKeyFile

    /// Opens the device key in `directory` (reached through `tcti`, or the TCTI it was made
    /// with), or makes one in the TPM `tcti` names when there is none: TPM-generated, or the
    /// software device key `importing` (its MACs stay the same, so nothing wrapped under it
    /// changes).
    ///
    /// - Throws: `errSecNotAvailable` when no TPM answers; `errSecDecode` when the blob is
    ///   damaged or the TPM is not the one it was made in.
    public init(directory: String, tcti: String?, importing: SecretBytes? = nil) throws {
        let path = directory + "/" + Self.fileName
        if let existing = try TPMDeviceKeyFile.load(from: path) {
            record = existing
            self.tcti = tcti ?? existing.tcti
            return
        }
        guard let tcti else { throw KeychainError(status: OSStatusCode.notAvailable, message: "no TPM is configured for this keychain") }
        let module = try Self.mapped(tcti) { try TrustedPlatformModule(tcti: tcti) }
        let made = try Self.mapped(tcti) {
            TPMDeviceKeyFile(
                tcti: tcti, storageRootKeyName: try module.storageRootKeyName(),
                deviceKey: try module.createHMACKey(auth: SecretBytes([]), dictionaryAttackProtected: false, importing: importing))
        }
        if try PrivateFile.createExclusively(path, with: made.encoded()) {
            record = made
        } else if let existing = try TPMDeviceKeyFile.load(from: path) {
            record = existing  // another enclave made it first
        } else {
            throw KeychainError(status: OSStatusCode.io, message: "the TPM device key vanished while it was created")
        }
        self.tcti = tcti
    }

    /// Whether `directory` holds a TPM device key.
    public static func exists(in directory: String) -> Bool {
        access(directory + "/" + fileName, F_OK) == 0
    }

    public func authenticationCode(for message: Data) throws -> SecretBytes {
        try use { try $0.hmac(key: record.deviceKey, auth: SecretBytes([]), message: message) }
    }

    public var summary: String { "TPM 2.0 (\(tcti))" }

    /// A new dictionary-attack-protected HMAC key for a passcode whose authValue is `auth`.
    func createPasscodeKey(auth: SecretBytes) throws -> Data {
        try use { try $0.createHMACKey(auth: auth, dictionaryAttackProtected: true) }
    }

    /// HMAC-SHA256 under the passcode key `key` with `auth`.
    ///
    /// - Throws: ``TPMFailure`` for a wrong `auth` (counted by the TPM) and in lockout;
    ///   `KeychainError` for everything else.
    func passcodeAuthenticationCode(key: Data, auth: SecretBytes, message: Data) throws -> SecretBytes {
        try use(passing: { $0.isWrongAuthorization || $0.isLockout }) { try $0.hmac(key: key, auth: auth, message: message) }
    }

    /// A new P-256 key in the TPM whose authValue is `auth`: its blob and public key.
    func createP256Key(auth: SecretBytes) throws -> (blob: Data, publicKey: Data) {
        try use { try $0.createP256Key(auth: auth) }
    }

    /// ECDSA with the P-256 key in `blob` over a 32-byte digest: r ‖ s.
    func sign(key blob: Data, auth: SecretBytes, digest: Data) throws -> Data {
        try use { try $0.sign(key: blob, auth: auth, digest: digest) }
    }

    /// ECDH with the P-256 key in `blob`: the shared x coordinate with `peer`.
    func keyExchange(key blob: Data, auth: SecretBytes, peer: Data) throws -> SecretBytes {
        try use { try $0.keyExchange(key: blob, auth: auth, peer: peer) }
    }

    /// Seconds after which the TPM forgives one dictionary-attack failure.
    func lockoutInterval() throws -> UInt32 {
        try use { try $0.lockoutInterval() }
    }

    /// Connects, checks that the TPM is the one the key was made in, and runs `body`.
    /// TPM failures become `KeychainError`s, but those `passing` lets through.
    private func use<T>(passing: (TPMFailure) -> Bool = { _ in false }, _ body: (TrustedPlatformModule) throws -> T) throws -> T {
        let module = try Self.mapped(tcti) { try TrustedPlatformModule(tcti: tcti) }
        guard try Self.mapped(tcti, { try module.storageRootKeyName() }) == record.storageRootKeyName else {
            throw Self.replaced(tcti, "its storage root key is not the one this keychain recorded")
        }
        do {
            return try body(module)
        } catch let failure as TPMFailure where !passing(failure) {
            // The storage root key is this keychain's: a blob it refuses is damaged.
            throw failure.isIntegrity ? Self.damaged(failure) : Self.keychainError(failure, tcti)
        }
    }

    private static func mapped<T>(_ tcti: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as TPMFailure { throw keychainError(failure, tcti) }
    }

    static func keychainError(_ failure: TPMFailure, _ tcti: String) -> KeychainError {
        if failure.isUnreachable {
            return KeychainError(status: OSStatusCode.notAvailable, message: "the TPM at \(tcti) does not answer (\(failure))")
        }
        if failure.isIntegrity { return replaced(tcti, "it refused this keychain's key blob (\(failure))") }
        if failure.isMalformed { return damaged(failure) }
        if failure.isLockout {
            return KeychainError(status: OSStatusCode.authFailed, message: "the TPM is in dictionary-attack lockout (\(failure))")
        }
        return KeychainError(status: OSStatusCode.internalComponent, message: "the TPM at \(tcti) failed: \(failure)")
    }

    private static func damaged(_ failure: TPMFailure) -> KeychainError {
        KeychainError.decode(
            "a TPM key blob of this keychain (device.tpm, the keybag's passcode key or an enclave key) is damaged (\(failure)); nothing was changed")
    }

    private static func replaced(_ tcti: String, _ why: String) -> KeychainError {
        KeychainError(
            status: OSStatusCode.decode,
            message: "the TPM at \(tcti) is not the one this keychain was made in — it was cleared or replaced: \(why). "
                + "Nothing was changed; move this keychain aside and restore a backup into a new one (security backup restore)")
    }
}

/// `KEYCHAIN_HOME/device.tpm` (0600): the TPM device key's blob and what identifies its TPM.
///
/// Format (big-endian): "TRTP", version 1, TCTI length u16, TCTI (UTF-8), storage root key
/// name length u8, name, blob length u16, blob (TPM2B_PUBLIC ‖ TPM2B_PRIVATE as marshalled).
struct TPMDeviceKeyFile: Sendable, Hashable {
    static let magic = Data("TRTP".utf8)
    static let version: UInt8 = 1

    var tcti: String
    var storageRootKeyName: Data
    var deviceKey: Data

    func encoded() -> Data {
        var out = Self.magic
        out.append(Self.version)
        out.appendInteger(UInt16(tcti.utf8.count))
        out.append(contentsOf: tcti.utf8)
        out.append(UInt8(storageRootKeyName.count))
        out.append(storageRootKeyName)
        out.appendInteger(UInt16(deviceKey.count))
        out.append(deviceKey)
        return out
    }

    init(tcti: String, storageRootKeyName: Data, deviceKey: Data) {
        self.tcti = tcti
        self.storageRootKeyName = storageRootKeyName
        self.deviceKey = deviceKey
    }

    init(decoding data: Data) throws {
        var reader = ByteReader(data)
        guard Data(try reader.bytes(4)) == Self.magic, try reader.byte() == Self.version else {
            throw KeychainError.decode("not a Trousseau TPM device key")
        }
        tcti = String(decoding: try reader.bytes(Int(try reader.integer(UInt16.self))), as: UTF8.self)
        storageRootKeyName = Data(try reader.bytes(Int(try reader.byte())))
        deviceKey = Data(try reader.bytes(Int(try reader.integer(UInt16.self))))
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in the TPM device key") }
    }

    static func load(from path: String) throws -> TPMDeviceKeyFile? {
        try PrivateFile.read(path).map(TPMDeviceKeyFile.init(decoding:))
    }
}

/// The passcode's scrypt output split for a TPM: HKDF-SHA256 with two labels, one half the
/// passcode key's authValue (it reaches the TPM only as a session HMAC), the other kept to
/// mix with that key's MAC.
struct TPMPasscodeHalves {
    let authValue: SecretBytes
    let kept: SecretBytes

    init(_ stretched: SecretBytes) {
        authValue = Self.derive(stretched, "trousseau TPM passcode authValue")
        kept = Self.derive(stretched, "trousseau TPM passcode kept half")
    }

    /// The kept half followed by the TPM's MAC.
    func entangled(with mac: SecretBytes) -> SecretBytes {
        kept.withUnsafeBytes { kept in
            mac.withUnsafeBytes { mac in
                SecretBytes(count: kept.count + mac.count) { out in
                    out.copyMemory(from: kept)
                    UnsafeMutableRawBufferPointer(rebasing: out[kept.count...]).copyMemory(from: mac)
                }
            }
        }
    }

    private static func derive(_ stretched: SecretBytes, _ label: String) -> SecretBytes {
        stretched.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), info: Data(label.utf8), outputByteCount: 32)
                .withUnsafeBytes { SecretBytes(copying: $0) }
        }
    }
}
