public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

extension FileKeychainHeader: WireCodable {
    public init(from reader: inout ByteReader) throws {
        try self.init(decoding: try .field(&reader, limit: 1024))
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
    public struct CreateFileKeychain: EnclaveRequest {
        public typealias Response = FileKeychainHeader
        public static let opcode: UInt8 = 42
        public static let mayChangeAvailableKeys = false
        public var password: SecretBytes
        public var autoLockSeconds: UInt32

        public init(password: SecretBytes, autoLockSeconds: UInt32) {
            self.password = password
            self.autoLockSeconds = autoLockSeconds
        }

        public init(from reader: inout ByteReader) throws {
            password = try reader.secret(limit: EnclaveCall.fieldLimit)
            autoLockSeconds = try reader.integer(UInt32.self)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendSecret(password)
            writer.appendInteger(autoLockSeconds)
        }
    }

    /// Unlocks the file keychain of `header` with its password (throttled per keychain).
    public struct UnlockFileKeychain: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 43
        public static let mayChangeAvailableKeys = true
        public var header: FileKeychainHeader
        public var password: SecretBytes
        public var autoLockSeconds: UInt32

        public init(header: FileKeychainHeader, password: SecretBytes, autoLockSeconds: UInt32) {
            self.header = header
            self.password = password
            self.autoLockSeconds = autoLockSeconds
        }

        public init(from reader: inout ByteReader) throws {
            header = try FileKeychainHeader(from: &reader)
            password = try reader.secret(limit: EnclaveCall.fieldLimit)
            autoLockSeconds = try reader.integer(UInt32.self)
        }

        public func encode(to writer: inout ByteWriter) {
            header.encode(to: &writer)
            writer.appendSecret(password)
            writer.appendInteger(autoLockSeconds)
        }
    }

    /// Locks one file keychain, or every one (nil).
    public struct LockFileKeychain: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 44
        public static let mayChangeAvailableKeys = true
        public var keychain: UUID?

        public init(_ keychain: UUID?) { self.keychain = keychain }
        public init(from reader: inout ByteReader) throws { keychain = try UUID?(from: &reader) }
        public func encode(to writer: inout ByteWriter) { keychain.encode(to: &writer) }
    }

    /// Whether a file keychain is unlocked.
    public struct FileKeychainUnlocked: EnclaveRequest {
        public typealias Response = Bool
        public static let opcode: UInt8 = 45
        public static let mayChangeAvailableKeys = false
        public var keychain: UUID

        public init(_ keychain: UUID) { self.keychain = keychain }
        public init(from reader: inout ByteReader) throws { keychain = try UUID(from: &reader) }
        public func encode(to writer: inout ByteWriter) { keychain.encode(to: &writer) }
    }

    /// Sets the idle time after which an unlocked file keychain locks (0: never).
    public struct SetFileKeychainTimeout: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 46
        public static let mayChangeAvailableKeys = true
        public var keychain: UUID
        public var autoLockSeconds: UInt32

        public init(_ keychain: UUID, autoLockSeconds: UInt32) {
            self.keychain = keychain
            self.autoLockSeconds = autoLockSeconds
        }

        public init(from reader: inout ByteReader) throws {
            keychain = try UUID(from: &reader)
            autoLockSeconds = try reader.integer(UInt32.self)
        }

        public func encode(to writer: inout ByteWriter) {
            keychain.encode(to: &writer)
            writer.appendInteger(autoLockSeconds)
        }
    }

    /// The header with the keychain's key under a new password, once the old opens it.
    public struct ChangeFileKeychainPassword: EnclaveRequest {
        public typealias Response = FileKeychainHeader
        public static let opcode: UInt8 = 47
        public static let mayChangeAvailableKeys = true
        public var header: FileKeychainHeader
        public var old: SecretBytes
        public var new: SecretBytes

        public init(header: FileKeychainHeader, old: SecretBytes, new: SecretBytes) {
            self.header = header
            self.old = old
            self.new = new
        }

        public init(from reader: inout ByteReader) throws {
            header = try FileKeychainHeader(from: &reader)
            old = try reader.secret(limit: EnclaveCall.fieldLimit)
            new = try reader.secret(limit: EnclaveCall.fieldLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            header.encode(to: &writer)
            writer.appendSecret(old)
            writer.appendSecret(new)
        }
    }
}
