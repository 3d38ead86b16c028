import CTPM
import FoundationEssentials
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// A TPM 2.0 response code other than success, with what the enclave needs to tell apart.
struct TPMFailure: Error, CustomStringConvertible {
    let code: UInt32

    private var layer: UInt32 { code >> 16 }
    /// The code without its layer and without the handle, session or parameter number it names.
    private var base: UInt32 {
        guard layer == 0 else { return code }
        return code & 0x80 != 0 ? code & 0xBF : code & 0xFFF
    }

    /// A wrong authValue: TPM_RC_AUTH_FAIL (counted by the dictionary-attack logic) or
    /// TPM_RC_BAD_AUTH (an object without it).
    var isWrongAuthorization: Bool { base == UInt32(TROUSSEAU_TPM_RC_AUTH_FAIL) || base == UInt32(TROUSSEAU_TPM_RC_BAD_AUTH) }
    /// TPM_RC_LOCKOUT: the dictionary-attack lockout refuses every DA-protected use.
    var isLockout: Bool { base == UInt32(TROUSSEAU_TPM_RC_LOCKOUT) }
    /// TPM_RC_INTEGRITY on Load: the blob was not made under this TPM's storage root key
    /// (the TPM was cleared, or it is another TPM).
    var isIntegrity: Bool { base == UInt32(TROUSSEAU_TPM_RC_INTEGRITY) }
    /// The TCTI (layer 10) or tpm2-abrmd's resource manager (11) failed: no TPM answered.
    /// (Layer 12 is TPM-format codes tpm2-abrmd makes itself, such as TPM_RC_OBJECT_MEMORY.)
    var isUnreachable: Bool { (10...11).contains(layer) }
    /// A blob of ours that does not parse.
    var isMalformed: Bool { code == UInt32(TROUSSEAU_TPM_RC_SHIM_FORMAT) || layer == 9 }

    var description: String {
        "TPM error 0x\(String(code, radix: 16)): \(String(cString: trousseau_tpm_describe(code)))"
    }
}

/// One connection to a TPM 2.0 through libtss2's ESYS (the CTPM shim), with the storage
/// root key made; closed when released. Each operation runs in its own salted session.
final class TrustedPlatformModule {
    private let handle: OpaquePointer
    /// The blobs' largest size: TPM2B_PUBLIC and TPM2B_PRIVATE marshalled.
    private static let blobCapacity = 1024

    /// Held while connected, when the TPM has no resource manager (``TPMLock``).
    private let lock: TPMLock?

    /// Connects to the TPM `tcti` names (`device:/dev/tpmrm0`, `swtpm:path=…`).
    init(tcti: String) throws {
        // The kernel's resource manager gives each connection its own slots and flushes them
        // when it closes; any other TCTI reaches the TPM itself, shared and leak-prone.
        lock = tcti.hasPrefix("device:/dev/tpmrm") ? nil : try TPMLock(tcti: tcti)
        var opened: OpaquePointer?
        let rc = trousseau_tpm_open(tcti, lock == nil ? 0 : 1, &opened)
        guard rc == 0, let opened else { throw TPMFailure(code: rc) }
        handle = opened
    }

    deinit { trousseau_tpm_close(handle) }

    /// The storage root key's name, which a keychain records to know its TPM again.
    func storageRootKeyName() throws -> Data {
        var name = [UInt8](repeating: 0, count: 128)
        var length = 0
        try check(trousseau_tpm_srk_name(handle, &name, name.count, &length))
        return Data(name.prefix(length))
    }

    /// A new HMAC-SHA256 key with `auth` as its authValue: TPM-generated, or `importing`'s bytes.
    func createHMACKey(auth: SecretBytes, dictionaryAttackProtected: Bool, importing key: SecretBytes? = nil) throws -> Data {
        var blob = [UInt8](repeating: 0, count: Self.blobCapacity)
        var length = 0
        let material = key ?? SecretBytes([])
        try check(auth.withUnsafeBytes { auth in
            material.withUnsafeBytes { material in
                trousseau_tpm_create_hmac_key(
                    handle, auth.bindMemory(to: UInt8.self).baseAddress, auth.count, dictionaryAttackProtected ? 1 : 0,
                    key == nil ? nil : material.bindMemory(to: UInt8.self).baseAddress, material.count, &blob, blob.count, &length)
            }
        })
        return Data(blob.prefix(length))
    }

    /// HMAC-SHA256 of `message` under the key in `blob`.
    func hmac(key blob: Data, auth: SecretBytes, message: Data) throws -> SecretBytes {
        try SecretBytes(count: 32) { mac in
            try check(blob.withUnsafeBytes { blob in
                auth.withUnsafeBytes { auth in
                    message.withUnsafeBytes { message in
                        trousseau_tpm_hmac(
                            handle, blob.bindMemory(to: UInt8.self).baseAddress, blob.count, auth.bindMemory(to: UInt8.self).baseAddress,
                            auth.count, message.bindMemory(to: UInt8.self).baseAddress, message.count, mac.bindMemory(to: UInt8.self).baseAddress)
                    }
                }
            })
        }
    }

    /// A new TPM-generated P-256 key (sign and ECDH) with `auth` as its authValue: its blob
    /// and its public key (X9.63).
    func createP256Key(auth: SecretBytes) throws -> (blob: Data, publicKey: Data) {
        var blob = [UInt8](repeating: 0, count: Self.blobCapacity)
        var length = 0
        var x963 = [UInt8](repeating: 0, count: 65)
        try check(auth.withUnsafeBytes { auth in
            trousseau_tpm_create_p256_key(handle, auth.bindMemory(to: UInt8.self).baseAddress, auth.count, &blob, blob.count, &length, &x963)
        })
        return (Data(blob.prefix(length)), Data(x963))
    }

    /// ECDSA over a SHA-256 digest: the raw signature r ‖ s.
    func sign(key blob: Data, auth: SecretBytes, digest: Data) throws -> Data {
        guard digest.count == 32 else { throw TPMFailure(code: UInt32(TROUSSEAU_TPM_RC_SHIM_SIZE)) }
        var r = [UInt8](repeating: 0, count: 32)
        var s = [UInt8](repeating: 0, count: 32)
        try check(blob.withUnsafeBytes { blob in
            auth.withUnsafeBytes { auth in
                digest.withUnsafeBytes { digest in
                    trousseau_tpm_sign(
                        handle, blob.bindMemory(to: UInt8.self).baseAddress, blob.count, auth.bindMemory(to: UInt8.self).baseAddress, auth.count,
                        digest.bindMemory(to: UInt8.self).baseAddress, &r, &s)
                }
            }
        })
        return Data(r + s)
    }

    /// ECDH: the shared x coordinate with `peer` (X9.63, 65 bytes).
    func keyExchange(key blob: Data, auth: SecretBytes, peer: Data) throws -> SecretBytes {
        guard peer.count == 65 else { throw TPMFailure(code: UInt32(TROUSSEAU_TPM_RC_SHIM_FORMAT)) }
        return try SecretBytes(count: 32) { shared in
            try check(blob.withUnsafeBytes { blob in
                auth.withUnsafeBytes { auth in
                    peer.withUnsafeBytes { peer in
                        trousseau_tpm_ecdh(
                            handle, blob.bindMemory(to: UInt8.self).baseAddress, blob.count, auth.bindMemory(to: UInt8.self).baseAddress,
                            auth.count, peer.bindMemory(to: UInt8.self).baseAddress, shared.bindMemory(to: UInt8.self).baseAddress)
                    }
                }
            })
        }
    }

    /// Seconds after which the TPM forgives one dictionary-attack failure (in lockout, when
    /// the next try is allowed): global to the TPM, set by whoever holds its lockoutAuth,
    /// read (never changed) here.
    func lockoutInterval() throws -> UInt32 {
        var counter: UInt32 = 0, maximum: UInt32 = 0, interval: UInt32 = 0, recovery: UInt32 = 0
        var inLockout: Int32 = 0
        try check(trousseau_tpm_lockout(handle, &counter, &maximum, &interval, &recovery, &inLockout))
        return interval
    }

    private func check(_ rc: UInt32) throws {
        if rc != 0 { throw TPMFailure(code: rc) }
    }
}

/// One Trousseau process at a time on a TPM reached without a resource manager (swtpm,
/// mssim, a raw /dev/tpm0): an exclusive flock on `/tmp/trousseau-tpm-UID-HASH.lock` for
/// the TCTI, held for a connection's lifetime. Two enclaves at once would need more than
/// swtpm's three object slots, and one killed mid-operation leaves its objects loaded; with
/// the lock held nothing else of ours is using the TPM, so what is loaded is left over and
/// is flushed (`reclaim`). Such a TPM is taken to be this user's Trousseau's alone.
private final class TPMLock {
    private let fd: Int32

    init(tcti: String) throws {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: a name, not a secret
        for byte in tcti.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let path = "/tmp/trousseau-tpm-\(getuid())-\(String(hash, radix: 16)).lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, info.st_uid == getuid() else {
            if fd >= 0 { close(fd) }
            throw KeychainError(status: OSStatusCode.io, message: "cannot open the TPM's lock \(path)")
        }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(fd)
                throw KeychainError(status: OSStatusCode.io, message: "cannot lock the TPM's lock \(path)")
            }
        }
    }

    deinit { close(fd) }  // releases the flock
}
