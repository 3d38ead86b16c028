public import FoundationEssentials
import KeychainCrypto
public import KeychainModel
import KeychainSystem
import EnclaveProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The device-key file, `KEYCHAIN_HOME/device.key` (0600): created atomically (written to
/// a temporary file, then linked into place, so a racing process sees either no key or a
/// whole one), refused when others may read it.
struct DeviceKeyFile {
    let path: String

    func loadOrCreate() throws -> SecretBytes {
        if let existing = try load() { return existing }
        let fresh = DeviceSecret.generate().secretBytes
        let temporary = path + ".\(getpid()).tmp"
        try write(fresh, to: temporary)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 {
            return fresh
        }
        guard errno == EEXIST, let existing = try load() else {
            throw SystemCall.ioError("cannot create the device key")
        }
        return existing
    }

    /// The key in the file, or nil when there is none (nothing is created).
    func loadExisting() throws -> SecretBytes? {
        try load()
    }

    private func load() throws -> SecretBytes? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemCall.ioError("cannot open the device key")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw KeychainError.io }
        guard info.st_mode & 0o077 == 0, info.st_uid == getuid() else {
            throw KeychainError(status: OSStatusCode.noAccessForItem,
                                message: "the device key at \(path) must be owned by this user with mode 0600")
        }
        var buffer = [UInt8](repeating: 0, count: DeviceSecret.byteCount + 1)
        defer { buffer.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        let total = try PrivateFile.readAll(fd, into: &buffer)
        guard total == DeviceSecret.byteCount else { throw KeychainError.decode("the device key file has the wrong size") }
        return SecretBytes(buffer.prefix(total))
    }

    private func write(_ secret: SecretBytes, to file: String) throws {
        try secret.withUnsafeBytes { bytes in
            try PrivateFile.write(bytes, to: file)
        }
    }
}

/// The device key in a 0600 file: the software backend of ``DeviceKey``.
public final class FileDeviceKey: DeviceKey {
    private let secret: DeviceSecret
    /// Why software holds the key, when this process made it.
    private let note: String?

    /// The device-key file's name inside `KEYCHAIN_HOME`.
    public static let fileName = "device.key"

    /// Opens the device key in `directory`, creating it on first use.
    ///
    /// - Throws: `errSecIO` when the file cannot be read or written, `errSecDecode` when
    ///   it is not a device key, `errSecNoAccessForItem` when others may read it.
    public init(directory: String, note: String? = nil) throws {
        secret = try DeviceSecret(bytes: DeviceKeyFile(path: directory + "/" + Self.fileName).loadOrCreate())
        self.note = note
    }

    public var summary: String { "software (\(Self.fileName), mode 0600)" + (note.map { ": \($0)" } ?? "") }

    public func authenticationCode(for message: Data) throws -> SecretBytes {
        secret.authenticationCode(for: message)
    }
}
