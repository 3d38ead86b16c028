public import FoundationEssentials
public import KeychainModel
public import KeychainBackupFormat

/// What a file keychain keeps beside its items so that its password, and nothing else,
/// opens it on any machine: its identity, the password's scrypt parameters and the
/// keychain key wrapped under the key they derive. No device key enters it: a copy of the
/// file is as strong as its password (docs/SECURITY.md, "File keychains").
///
/// The keychain key is one `ClassKey`: every protection class of a file keychain is
/// available while it is unlocked and none while it is locked, as in a macOS file keychain.
public struct FileKeychainHeader: Sendable, Hashable {
    /// The format this version writes; a file with a larger one is refused, not guessed at.
    public static let currentVersion: UInt8 = 1
    static let magic = Data("TRKC".utf8)

    public var version: UInt8
    /// The keychain's identity: the same in every copy of the file.
    public var uuid: UUID
    public var kdf: PasscodeKDF
    /// The keychain key, AES-256-GCM under the password's key, bound to `uuid` and `version`.
    public var wrappedKey: Data

    public init(version: UInt8 = Self.currentVersion, uuid: UUID, kdf: PasscodeKDF, wrappedKey: Data) {
        self.version = version
        self.uuid = uuid
        self.kdf = kdf
        self.wrappedKey = wrappedKey
    }

    /// A new keychain key and the header that keeps it under `password`.
    public static func create(password: SecretBytes, kdf: PasscodeKDF) throws -> (FileKeychainHeader, ClassKey) {
        let key = ClassKey.generate()
        var header = FileKeychainHeader(uuid: UUID(), kdf: kdf, wrappedKey: Data())
        header.wrappedKey = try header.wrappingKey(password).wrap(key, associatedData: header.associatedData)
        return (header, key)
    }

    /// The keychain key, when `password` is the keychain's.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong password; `errSecInvalidKeychain` for
    ///   parameters no keychain of ours has.
    public func open(password: SecretBytes) throws -> ClassKey {
        // Memory and work both bounded: a crafted file must not tie up the enclave.
        guard kdf.memoryBytes <= BackupArchive.maximumKDFMemory, kdf.totalMemoryBytes <= 2 * BackupArchive.maximumKDFMemory else {
            throw KeychainError(status: OSStatusCode.invalidKeychain, message: "the keychain's password parameters are out of range")
        }
        do {
            return try wrappingKey(password).unwrap(wrappedKey, associatedData: associatedData)
        } catch let error as KeychainError where error == .decode {
            throw KeychainError(status: OSStatusCode.authFailed, message: "the keychain password is not correct")
        }
    }

    /// The same key kept under `password` with fresh parameters: the items stay as they are.
    public func rewrapped(_ key: ClassKey, password: SecretBytes, kdf: PasscodeKDF) throws -> FileKeychainHeader {
        var header = self
        header.kdf = kdf
        header.wrappedKey = try header.wrappingKey(password).wrap(key, associatedData: header.associatedData)
        return header
    }

    private func wrappingKey(_ password: SecretBytes) throws -> WrappingKey {
        WrappingKey(deriving: try kdf.derive(password), info: "trousseau file keychain wrapping key")
    }

    private var associatedData: Data {
        var data = Self.magic
        data.append(version)
        withUnsafeBytes(of: uuid.uuid) { data.append(contentsOf: $0) }
        return data
    }

    // MARK: - Encoding

    /// The header's bytes, as the keychain file stores them.
    public var encoded: Data {
        var out = Self.magic
        out.append(version)
        withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        out.append(kdf.logN)
        out.appendInteger(kdf.blockSize)
        out.appendInteger(kdf.parallelism)
        out.appendLengthPrefixed(kdf.salt)
        out.appendLengthPrefixed(wrappedKey)
        return out
    }

    /// Parses ``encoded``.
    ///
    /// - Throws: `errSecInvalidKeychain` for bytes that are not a header, or a header of a
    ///   newer format (saying so).
    public init(decoding data: Data) throws {
        var reader = ByteReader(data)
        do {
            guard Data(try reader.bytes(4)) == Self.magic else {
                throw KeychainError(status: OSStatusCode.invalidKeychain, message: "not a Trousseau keychain")
            }
            version = try reader.byte()
            guard version <= Self.currentVersion, version > 0 else {
                throw KeychainError(
                    status: OSStatusCode.invalidKeychain,
                    message: "the keychain was made by a newer Trousseau (format \(version); this one reads \(Self.currentVersion))")
            }
            uuid = UUID(uuid: try reader.bytes(16).withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
            let logN = try reader.byte()
            let blockSize = try reader.integer(UInt32.self)
            let parallelism = try reader.integer(UInt32.self)
            kdf = PasscodeKDF(logN: logN, blockSize: blockSize, parallelism: parallelism, salt: try reader.lengthPrefixed(limit: 64))
            // What `PasscodeKDF.derive` accepts; no keychain of ours has other parameters.
            guard (10...24).contains(logN), (1...64).contains(blockSize), (1...16).contains(parallelism) else {
                throw KeychainError(status: OSStatusCode.invalidKeychain, message: "the keychain's password parameters are out of range")
            }
            wrappedKey = try reader.lengthPrefixed(limit: 256)
            guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes") }
        } catch let error as KeychainError where error.status != OSStatusCode.invalidKeychain {
            throw KeychainError(status: OSStatusCode.invalidKeychain, message: "the keychain's header is damaged")
        }
    }
}
