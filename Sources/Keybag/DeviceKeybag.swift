public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// An in-process keybag whose every key derives from one 256-bit device key kept in a
/// 0600 file, `KEYCHAIN_HOME/device.key`.
///
/// This is the keybag of a device without a passcode: every protection class is
/// available at all times, except WhenPasscodeSetThisDeviceOnly, which cannot exist
/// without a passcode (errSecAuthFailed). Anyone who can read the device-key file and the
/// database can read every item. The enclave issue moves the keys out of this process and
/// adds the passcode and lock states.
public final class DeviceKeybag: Keybag {
    private let root: RootKey
    private let index: IndexKey
    private let metadataKeys: [ProtectionClass: MetadataKey]
    private let classKeys: [ProtectionClass: ClassKey]

    /// The device-key file's name inside `KEYCHAIN_HOME`.
    public static let fileName = "device.key"

    /// Opens the device key in `directory`, creating it on first use. The process becomes
    /// non-dumpable first (``ProcessHardening``): it is about to hold keys.
    ///
    /// - Throws: `errSecIO` when the file cannot be read or written, `errSecDecode` when
    ///   it is not a device key, `errSecNoAccessForItem` when others may read it.
    public init(directory: String) throws {
        try ProcessHardening.apply()
        let secret = try DeviceKeyFile(path: directory + "/" + Self.fileName).loadOrCreate()
        root = try RootKey(bytes: secret)
        index = root.indexKey()
        var metadata: [ProtectionClass: MetadataKey] = [:]
        var classes: [ProtectionClass: ClassKey] = [:]
        for protection in ProtectionClass.allCases {
            metadata[protection] = root.metadataKey(for: protection)
            classes[protection] = root.classKey(for: protection)
        }
        metadataKeys = metadata
        classKeys = classes
    }

    public func indexKey() throws -> IndexKey { index }

    public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        try Self.requireAvailable(protection)
        return metadataKeys[protection]!  // every class was derived in init
    }

    public func wrapItemKey(_ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data) throws -> Data {
        try Self.requireAvailable(protection)
        return try classKeys[protection]!.wrap(itemKey, associatedData: associatedData)  // derived in init
    }

    public func unwrapItemKey(_ wrapped: Data, for protection: ProtectionClass, associatedData: Data) throws -> ItemKey {
        try Self.requireAvailable(protection)
        return try classKeys[protection]!.unwrap(wrapped, associatedData: associatedData)  // derived in init
    }

    /// Without a passcode there is no WhenPasscodeSetThisDeviceOnly class.
    private static func requireAvailable(_ protection: ProtectionClass) throws {
        if protection == .whenPasscodeSetThisDeviceOnly {
            throw KeychainError(status: OSStatusCode.authFailed,
                                message: "WhenPasscodeSetThisDeviceOnly items need a passcode, and none is set")
        }
    }
}

/// The device-key file: created atomically (written to a temporary file, then linked into
/// place, so a racing process sees either no key or a whole one), readable by its owner only.
struct DeviceKeyFile {
    let path: String

    func loadOrCreate() throws -> SecretBytes {
        if let existing = try load() { return existing }
        let fresh = RootKey.generate().secretBytes
        let temporary = path + ".\(getpid()).tmp"
        try write(fresh, to: temporary)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 {
            return fresh
        }
        guard errno == EEXIST, let existing = try load() else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot create the device key: \(String(cString: strerror(errno)))")
        }
        return existing
    }

    private func load() throws -> SecretBytes? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw KeychainError(status: OSStatusCode.io, message: "cannot open the device key: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw KeychainError.io }
        guard info.st_mode & 0o077 == 0, info.st_uid == getuid() else {
            throw KeychainError(status: OSStatusCode.noAccessForItem,
                                message: "the device key at \(path) must be owned by this user with mode 0600")
        }
        var buffer = [UInt8](repeating: 0, count: RootKey.byteCount + 1)
        defer { buffer.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw KeychainError.io }
            if n == 0 { break }
            total += n
        }
        guard total == RootKey.byteCount else { throw KeychainError.decode("the device key file has the wrong size") }
        return SecretBytes(buffer.prefix(total))
    }

    private func write(_ secret: SecretBytes, to file: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot write the device key: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = secret.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
        guard written == secret.count, fsync(fd) == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot write the device key: \(String(cString: strerror(errno)))")
        }
    }
}
