import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// The keybag file, `KEYCHAIN_HOME/keybag`: the class keys, each wrapped, and the passcode's
/// KDF parameters and the keybag's settings. Replaced atomically, so a crash during a
/// passcode change leaves the old file or the new one.
///
/// Format (big-endian): "TRKB", version 1, UUID (16), flags (bit 0: passcode set),
/// [logN u8, r u32, p u32, salt length u8, salt], auto-lock seconds u32 (0: never),
/// erase-after-failures u32 (0: never), entry count u8, then per entry: class name length
/// u8, class name, wrapping u8 (0 device, 1 passcode), wrapped key length u16, wrapped key.
/// Version 2 (a keychain on a TPM with a passcode) adds flags bit 1 and, after the KDF's
/// parameters, the passcode's TPM key: blob length u16, blob. Version 1 files are written
/// whenever there is no such key, so a software keybag reads in every earlier Trousseau.
struct KeybagFile: Sendable {
    enum Wrapping: UInt8, Sendable {
        /// Under a key derived from the device key alone.
        case device = 0
        /// Under a key derived from the passcode entangled with the device key.
        case passcode = 1
    }

    struct Entry: Sendable {
        var wrapping: Wrapping
        var wrappedKey: Data
    }

    static let magic = Data("TRKB".utf8)
    static let version: UInt8 = 1
    /// The version of a keybag with a passcode key in a TPM.
    static let tpmVersion: UInt8 = 2
    static let fileName = "keybag"

    var uuid: UUID
    var passcodeKDF: PasscodeKDF?
    /// The TPM key the passcode authorizes (dictionary-attack protected), when the device
    /// key is in a TPM and a passcode is set.
    var passcodeKey: Data?
    var autoLockSeconds: UInt32 = 0
    var eraseAfterFailures: UInt32 = 0
    var entries: [ProtectionClass: Entry] = [:]

    /// The associated data a class key is wrapped with: the keybag's identity, the class
    /// and how it is wrapped, so entries cannot be moved between keybags or classes.
    func associatedData(for protection: ProtectionClass, wrapping: Wrapping) -> Data {
        var out = Data("trousseau keybag v1".utf8)
        withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        out.append(contentsOf: Array(protection.rawValue.utf8) + [0, wrapping.rawValue])
        return out
    }

    func encoded() -> Data {
        var out = Self.magic
        let tpmKey = passcodeKDF == nil ? nil : passcodeKey
        out.append(tpmKey == nil ? Self.version : Self.tpmVersion)
        withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        out.append((passcodeKDF == nil ? 0 : 1) | (tpmKey == nil ? 0 : 2))
        if let kdf = passcodeKDF {
            out.append(kdf.logN)
            out.appendInteger(kdf.blockSize)
            out.appendInteger(kdf.parallelism)
            out.append(UInt8(kdf.salt.count))
            out.append(kdf.salt)
        }
        if let tpmKey {
            out.appendInteger(UInt16(tpmKey.count))
            out.append(tpmKey)
        }
        out.appendInteger(autoLockSeconds)
        out.appendInteger(eraseAfterFailures)
        let ordered = ProtectionClass.allCases.filter { entries[$0] != nil }
        out.append(UInt8(ordered.count))
        for protection in ordered {
            let entry = entries[protection]!  // filtered above
            out.append(UInt8(protection.rawValue.utf8.count))
            out.append(contentsOf: protection.rawValue.utf8)
            out.append(entry.wrapping.rawValue)
            out.appendInteger(UInt16(entry.wrappedKey.count))
            out.append(entry.wrappedKey)
        }
        return out
    }

    init(uuid: UUID) {
        self.uuid = uuid
    }

    /// Parses a keybag file.
    ///
    /// - Throws: `errSecDecode` for anything that is not a well-formed version-1 keybag.
    init(decoding data: Data) throws {
        var reader = ByteReader(data)
        guard Data(try reader.bytes(4)) == Self.magic else { throw KeychainError.decode("not a Trousseau keybag") }
        let version = try reader.byte()
        guard version == Self.version || version == Self.tpmVersion else {
            throw KeychainError.decode("not a Trousseau keybag of a version this one reads")
        }
        let u = Array(try reader.bytes(16))
        uuid = UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
        let flags = try reader.byte()
        // Version 1: 0 or 1; version 2: passcode and TPM key both (3).
        guard version == Self.version ? flags <= 1 : flags == 3 else { throw KeychainError.decode("unknown keybag flags") }
        if flags & 1 != 0 {
            let logN = try reader.byte()
            let blockSize = try reader.integer(UInt32.self)
            let parallelism = try reader.integer(UInt32.self)
            let salt = Data(try reader.bytes(Int(try reader.byte())))
            passcodeKDF = PasscodeKDF(logN: logN, blockSize: blockSize, parallelism: parallelism, salt: salt)
        }
        if flags & 2 != 0 {
            passcodeKey = Data(try reader.bytes(Int(try reader.integer(UInt16.self))))
        }
        autoLockSeconds = try reader.integer(UInt32.self)
        eraseAfterFailures = try reader.integer(UInt32.self)
        for _ in 0..<Int(try reader.byte()) {
            let name = String(decoding: try reader.bytes(Int(try reader.byte())), as: UTF8.self)
            guard let protection = ProtectionClass(rawValue: name),
                let wrapping = Wrapping(rawValue: try reader.byte())
            else { throw KeychainError.decode("unknown keybag entry") }
            let wrapped = Data(try reader.bytes(Int(try reader.integer(UInt16.self))))
            entries[protection] = Entry(wrapping: wrapping, wrappedKey: wrapped)
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in keybag") }
    }

    static func load(from directory: String) throws -> KeybagFile? {
        try PrivateFile.read(directory + "/" + fileName).map(KeybagFile.init(decoding:))
    }

    /// Writes a new keybag unless one exists. Returns false when another was there first.
    func create(in directory: String) throws -> Bool {
        try PrivateFile.createExclusively(directory + "/" + Self.fileName, with: encoded())
    }

    func save(to directory: String) throws {
        try PrivateFile.replace(directory + "/" + Self.fileName, with: encoded())
    }
}
