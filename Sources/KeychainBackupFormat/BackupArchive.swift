import Crypto
public import FoundationEssentials
public import KeychainModel

/// A keychain backup: one authenticated, versioned file holding every backed-up row,
/// re-encrypted under a backup keybag of its own.
///
/// Format (big-endian, byte strings u32-length-prefixed):
/// `"TRBK"`, version 1, archive UUID (16), creation time (i64 seconds since 1970), source
/// device identifier (16), scrypt parameters (logN u8, r u32, p u32, salt), class count u8
/// and per class its name, its wrapping (``Wrapping``) and its wrapped key; record count
/// u32 and per record the row's plaintext identity (class, UUID, access group, protection,
/// sync, tombstone) and its metadata and secret blobs; then HMAC-SHA256 of everything
/// before it under a key derived from the backup password.
///
/// What a reader learns without the password: how many items of which class are in which
/// access group — what the database's plaintext columns already show. Attributes and
/// secrets are sealed as in the database, with the record's identity as associated data.
public struct BackupArchive: Sendable {
    /// How a backup class key is wrapped.
    public enum Wrapping: UInt8, Sendable {
        /// Under a key derived from the backup password: restorable on any device.
        case password = 0
        /// Under the backup password entangled with the device key: only on this device.
        case passwordAndDevice = 1
    }

    /// One backed-up row.
    public struct Record: Sendable, Hashable {
        public var itemClass: ItemClass
        public var uuid: UUID
        public var accessGroup: String
        public var protection: ProtectionClass
        public var synchronizable: Bool
        public var tombstone: Bool
        /// The attributes, sealed under the backup class's metadata key.
        public var metadata: Data
        /// The secret in KeychainCrypto's `SecretBlob` format, its item key wrapped by the backup class key.
        public var secret: Data

        public init(
            itemClass: ItemClass, uuid: UUID, accessGroup: String, protection: ProtectionClass,
            synchronizable: Bool, tombstone: Bool, metadata: Data = Data(), secret: Data = Data()
        ) {
            self.itemClass = itemClass
            self.uuid = uuid
            self.accessGroup = accessGroup
            self.protection = protection
            self.synchronizable = synchronizable
            self.tombstone = tombstone
            self.metadata = metadata
            self.secret = secret
        }
    }

    /// The most memory a backup's scrypt parameters may ask for (1 GiB): an archive is
    /// untrusted input until its MAC is checked, which needs them.
    public static let maximumKDFMemory = 1 << 30

    static let magic = Data("TRBK".utf8)
    public static let version: UInt8 = 1
    static let macSize = 32

    public var uuid: UUID
    public var created: Date
    /// Which device made the archive (``deviceIdentifier(_:)`` of its device key).
    public var sourceDevice: Data
    public var kdf: PasscodeKDF
    public var classKeys: [ProtectionClass: (wrapping: Wrapping, wrapped: Data)]
    public var records: [Record]

    public init(
        uuid: UUID, created: Date, sourceDevice: Data, kdf: PasscodeKDF,
        classKeys: [ProtectionClass: (wrapping: Wrapping, wrapped: Data)], records: [Record] = []
    ) {
        self.uuid = uuid
        self.created = created
        self.sourceDevice = sourceDevice
        self.kdf = kdf
        self.classKeys = classKeys
        self.records = records
    }

    /// A device's identifier in archives: the first 16 bytes of its device key's MAC of a
    /// fixed label (it names the device without revealing anything about its key).
    public static func deviceIdentifier(_ authenticationCode: SecretBytes) -> Data {
        authenticationCode.withUnsafeBytes { Data($0.prefix(16)) }
    }

    /// The label whose device-key MAC is ``deviceIdentifier(_:)``'s input.
    public static let deviceIdentifierLabel = Data("trousseau device identifier".utf8)

    /// The associated data a backup class key is wrapped with.
    public static func classKeyAssociatedData(archive: UUID, protection: ProtectionClass, wrapping: Wrapping) -> Data {
        var out = Data("trousseau backup keybag".utf8)
        withUnsafeBytes(of: archive.uuid) { out.append(contentsOf: $0) }
        out.append(contentsOf: Array(protection.rawValue.utf8) + [0, wrapping.rawValue])
        return out
    }

    // MARK: - Encoding

    /// The archive's bytes, authenticated with `integrityKey`.
    public func encoded(integrityKey: BackupIntegrityKey) -> Data {
        var out = Data()
        appendHeader(to: &out)
        out.appendInteger(UInt32(records.count))
        for record in records {
            out.appendLengthPrefixed(Data(record.itemClass.rawValue.utf8))
            withUnsafeBytes(of: record.uuid.uuid) { out.append(contentsOf: $0) }
            out.appendLengthPrefixed(Data(record.accessGroup.utf8))
            out.appendLengthPrefixed(Data(record.protection.rawValue.utf8))
            out.append(record.synchronizable ? 1 : 0)
            out.append(record.tombstone ? 1 : 0)
            out.appendLengthPrefixed(record.metadata)
            out.appendLengthPrefixed(record.secret)
        }
        out.append(integrityKey.authenticationCode(for: out))
        return out
    }

    /// Everything before the records (what the enclave needs to make or open the keybag).
    public func appendHeader(to out: inout Data) {
        out.append(Self.magic)
        out.append(Self.version)
        withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        out.appendInteger(Int64(created.timeIntervalSince1970.rounded(.down)))
        out.append(sourceDevice)
        out.append(kdf.logN)
        out.appendInteger(kdf.blockSize)
        out.appendInteger(kdf.parallelism)
        out.appendLengthPrefixed(kdf.salt)
        let ordered = ProtectionClass.allCases.filter { classKeys[$0] != nil }
        out.append(UInt8(ordered.count))
        for protection in ordered {
            let (wrapping, wrapped) = classKeys[protection]!  // filtered above
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
            out.append(wrapping.rawValue)
            out.appendLengthPrefixed(wrapped)
        }
    }

    /// Parses an archive's structure without checking its integrity (that needs the
    /// password: ``verify(_:keys:)``).
    ///
    /// - Throws: `errSecDecode` for anything that is not a well-formed version-1 archive.
    public init(decoding data: Data) throws {
        guard data.count > Self.macSize else { throw KeychainError.decode("not a Trousseau backup") }
        var reader = ByteReader(data.prefix(data.count - Self.macSize))
        try self.init(header: &reader)
        let count = Int(try reader.integer(UInt32.self))
        // Every record takes at least 40 bytes: a count larger than the file is a lie.
        guard count <= reader.remaining / 40 else { throw KeychainError.decode("truncated backup") }
        records.reserveCapacity(count)
        for _ in 0..<count {
            let name = String(decoding: try reader.lengthPrefixed(limit: 8), as: UTF8.self)
            guard let itemClass = ItemClass(rawValue: name), ItemClass.stored.contains(itemClass) else {
                throw KeychainError.decode("unknown item class in backup")
            }
            let uuid = Self.uuid(try reader.bytes(16))
            let group = String(decoding: try reader.lengthPrefixed(limit: 4096), as: UTF8.self)
            let protection = try Self.protection(&reader)
            let sync = try reader.byte()
            let tomb = try reader.byte()
            guard sync <= 1, tomb <= 1 else { throw KeychainError.decode("malformed backup record") }
            records.append(Record(
                itemClass: itemClass, uuid: uuid, accessGroup: group, protection: protection,
                synchronizable: sync == 1, tombstone: tomb == 1,
                metadata: try reader.lengthPrefixed(), secret: try reader.lengthPrefixed()))
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in backup") }
    }

    /// Parses a header written by ``appendHeader(to:)``; the archive has no records.
    public init(header reader: inout ByteReader) throws {
        guard Data(try reader.bytes(4)) == Self.magic else { throw KeychainError.decode("not a Trousseau backup") }
        guard try reader.byte() == Self.version else { throw KeychainError.decode("unknown backup version") }
        uuid = Self.uuid(try reader.bytes(16))
        created = Date(timeIntervalSince1970: Double(try reader.integer(Int64.self)))
        sourceDevice = Data(try reader.bytes(16))
        let logN = try reader.byte()
        let blockSize = try reader.integer(UInt32.self)
        let parallelism = try reader.integer(UInt32.self)
        kdf = PasscodeKDF(logN: logN, blockSize: blockSize, parallelism: parallelism, salt: try reader.lengthPrefixed(limit: 64))
        classKeys = [:]
        for _ in 0..<Int(try reader.byte()) {
            let protection = try Self.protection(&reader)
            guard let wrapping = Wrapping(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown backup key wrapping") }
            classKeys[protection] = (wrapping, try reader.lengthPrefixed(limit: 256))
        }
        records = []
    }

    /// Checks the archive's MAC: a wrong password and an altered byte look the same.
    ///
    /// - Throws: `errSecAuthFailed` when it does not match.
    public static func verify(_ data: Data, key: BackupIntegrityKey) throws {
        guard data.count > macSize else { throw KeychainError.decode("not a Trousseau backup") }
        let body = data.prefix(data.count - macSize)
        guard key.isValidAuthenticationCode(Data(data.suffix(macSize)), for: body) else {
            throw KeychainError(
                status: OSStatusCode.authFailed, message: "the backup password is not correct, or the backup was altered")
        }
    }

    private static func uuid(_ b: ArraySlice<UInt8>) -> UUID {
        let b = Array(b)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    private static func protection(_ reader: inout ByteReader) throws -> ProtectionClass {
        let name = String(decoding: try reader.lengthPrefixed(limit: 8), as: UTF8.self)
        guard let protection = ProtectionClass(rawValue: name) else { throw KeychainError.decode("unknown protection class in backup") }
        return protection
    }
}

/// The keys a backup password gives: scrypt of the password (memory-hard), then HKDF to
/// one key that wraps the backup's class keys and one that authenticates the archive.
/// Zeroed when dropped.
public struct BackupPasswordKeys: Sendable {
    package let stretched: SymmetricKey

    /// Derives the keys; as slow as `kdf` makes it, on purpose.
    public init(password: SecretBytes, kdf: PasscodeKDF) throws {
        stretched = try kdf.derive(password).withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// Material to entangle with the device key for the ThisDeviceOnly classes.
    public var deviceEntanglement: Data {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: stretched, info: Data("trousseau backup device entanglement".utf8), outputByteCount: 32)
            .withUnsafeBytes { Data($0) }
    }

    /// The key that authenticates the archive.
    public var integrityKey: BackupIntegrityKey {
        BackupIntegrityKey(key: HKDF<SHA256>.deriveKey(
            inputKeyMaterial: stretched, info: Data("trousseau backup integrity key".utf8), outputByteCount: 32))
    }
}

/// The key of an archive's HMAC. The enclave, which derives it with the class keys' wrapping
/// key, hands it to securityd, so that the password is stretched once per backup or restore.
public struct BackupIntegrityKey: Sendable {
    let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    /// The key's bytes, for carrying it from the enclave to the daemon.
    public var secretBytes: SecretBytes { key.withUnsafeBytes { SecretBytes($0) } }

    /// A key carried from the enclave.
    ///
    /// - Throws: `errSecDecode` when `bytes` is not 32 bytes long.
    public init(bytes: SecretBytes) throws {
        guard bytes.count == 32 else { throw KeychainError.decode("an integrity key is 32 bytes") }
        key = bytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    func authenticationCode(for data: Data) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: data, using: key))
    }

    func isValidAuthenticationCode(_ code: Data, for data: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: data, using: key)
    }
}
