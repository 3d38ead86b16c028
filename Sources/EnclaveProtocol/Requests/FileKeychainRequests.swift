public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

/// A file keychain's header is also what its file stores: its codec is frozen with it.
extension FileKeychainHeader: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        try self.init(decoding: try reader.lengthPrefixed(limit: 1024))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(encoded)
    }
}

// File keychains: their keys are made, opened and held here; their headers are securityd's
// to store. The key requests (IndexKey, MetadataKey, WrapItemKey, UnwrapItemKey) name the
// file keychain whose key they use.

extension EnclaveCall {
    /// A new file keychain under `password`, unlocked; its header for the file.
    public struct CreateFileKeychain: EnclaveRequest, Codable {
        public typealias Response = FileKeychainHeader
        public static let mayChangeAvailableKeys = false
        public var password: SecretBytes
        public var autoLockSeconds: UInt32

        public init(password: SecretBytes, autoLockSeconds: UInt32) {
            self.password = password
            self.autoLockSeconds = autoLockSeconds
        }
    }

    /// Unlocks the file keychain of `header` with its password (throttled per keychain).
    public struct UnlockFileKeychain: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = true
        public var header: FileKeychainHeader
        public var password: SecretBytes
        public var autoLockSeconds: UInt32

        public init(header: FileKeychainHeader, password: SecretBytes, autoLockSeconds: UInt32) {
            self.header = header
            self.password = password
            self.autoLockSeconds = autoLockSeconds
        }
    }

    /// Locks one file keychain, or every one (nil).
    public struct LockFileKeychain: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = true
        public var keychain: UUID?

        public init(_ keychain: UUID?) { self.keychain = keychain }
    }

    /// Whether a file keychain is unlocked.
    public struct FileKeychainUnlocked: EnclaveRequest, Codable {
        public typealias Response = Bool
        public static let mayChangeAvailableKeys = false
        public var keychain: UUID

        public init(_ keychain: UUID) { self.keychain = keychain }
    }

    /// Sets the idle time after which an unlocked file keychain locks (0: never).
    public struct SetFileKeychainTimeout: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = true
        public var keychain: UUID
        public var autoLockSeconds: UInt32

        public init(_ keychain: UUID, autoLockSeconds: UInt32) {
            self.keychain = keychain
            self.autoLockSeconds = autoLockSeconds
        }
    }

    /// The header with the keychain's key under a new password, once the old opens it.
    public struct ChangeFileKeychainPassword: EnclaveRequest, Codable {
        public typealias Response = FileKeychainHeader
        public static let mayChangeAvailableKeys = true
        public var header: FileKeychainHeader
        public var old: SecretBytes
        public var new: SecretBytes

        public init(header: FileKeychainHeader, old: SecretBytes, new: SecretBytes) {
            self.header = header
            self.old = old
            self.new = new
        }
    }
}
