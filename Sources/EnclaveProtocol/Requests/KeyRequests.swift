public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

extension EnclaveCall {
    /// A 32-byte key handed to securityd (index, metadata, item key), in zeroing storage
    /// from the socket to the key type that consumes it.
    public struct Key: WireCodable {
        public var bytes: SecretBytes

        public init(_ bytes: SecretBytes) { self.bytes = bytes }

        public init(from reader: inout ByteReader) throws {
            guard reader.remaining == 32 else { throw KeychainError.decode("malformed key in enclave response") }
            bytes = reader.restAsSecret()
        }

        public func encode(to writer: inout ByteWriter) {
            bytes.withUnsafeBytes { writer.append(contentsOf: $0) }
        }
    }

    /// The key of the keyed tokens.
    public struct IndexKey: EnclaveRequest {
        public typealias Response = Key
        public static let opcode: UInt8 = 6
        public static let mayChangeAvailableKeys = false
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID?

        public init(keychain: UUID? = nil) { self.keychain = keychain }
        public init(from reader: inout ByteReader) throws { keychain = try UUID?(from: &reader) }
        public func encode(to writer: inout ByteWriter) { keychain.encode(to: &writer) }
    }

    /// The metadata key of a class.
    public struct MetadataKey: EnclaveRequest {
        public typealias Response = Key
        public static let opcode: UInt8 = 7
        public static let mayChangeAvailableKeys = false
        public var protection: ProtectionClass
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID?

        public init(_ protection: ProtectionClass, keychain: UUID? = nil) {
            self.protection = protection
            self.keychain = keychain
        }

        public init(from reader: inout ByteReader) throws {
            protection = try ProtectionClass(from: &reader)
            keychain = try UUID?(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            protection.encode(to: &writer)
            keychain.encode(to: &writer)
        }
    }

    /// Wraps a per-item key under a class key, binding an access control when given.
    public struct WrapItemKey: EnclaveRequest {
        public static let opcode: UInt8 = 8
        public static let mayChangeAvailableKeys = false
        public var protection: ProtectionClass
        public var itemKey: KeychainCrypto.ItemKey
        public var associatedData: Data
        public var access: AccessControl?
        public var context: Data?
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID?

        public init(
            _ protection: ProtectionClass, _ itemKey: KeychainCrypto.ItemKey, associatedData: Data, access: AccessControl?, context: Data?,
            keychain: UUID? = nil
        ) {
            self.keychain = keychain
            self.protection = protection
            self.itemKey = itemKey
            self.associatedData = associatedData
            self.access = access
            self.context = context
        }

        public init(from reader: inout ByteReader) throws {
            protection = try ProtectionClass(from: &reader)
            itemKey = try KeychainCrypto.ItemKey(bytes: reader.secret(limit: EnclaveCall.fieldLimit))
            associatedData = try .field(&reader)
            access = try AccessControl?(from: &reader)
            context = try reader.byte() == 1 ? try .field(&reader, limit: EnclaveCall.idLimit) : nil
            keychain = try UUID?(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            protection.encode(to: &writer)
            writer.appendSecret(itemKey.secretBytes)
            writer.appendLengthPrefixed(associatedData)
            access.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
            keychain.encode(to: &writer)
        }

        /// The wrapped key, and the access control as it must be stored.
        public struct Response: WireCodable {
            public var wrapped: Data
            public var access: AccessControl?

            public init(wrapped: Data, access: AccessControl?) {
                self.wrapped = wrapped
                self.access = access
            }

            public init(from reader: inout ByteReader) throws {
                wrapped = try .field(&reader)
                access = try AccessControl?(from: &reader)
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(wrapped)
                access.encode(to: &writer)
            }
        }
    }

    /// Unwraps a per-item key, once the context has proven what its access control asks.
    public struct UnwrapItemKey: EnclaveRequest {
        public typealias Response = Key
        public static let opcode: UInt8 = 9
        public static let mayChangeAvailableKeys = false
        public var protection: ProtectionClass
        public var wrapped: Data
        public var associatedData: Data
        public var access: AccessControl?
        public var context: Data?
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID?

        public init(
            _ protection: ProtectionClass, wrapped: Data, associatedData: Data, access: AccessControl?, context: Data?, keychain: UUID? = nil
        ) {
            self.keychain = keychain
            self.protection = protection
            self.wrapped = wrapped
            self.associatedData = associatedData
            self.access = access
            self.context = context
        }

        public init(from reader: inout ByteReader) throws {
            protection = try ProtectionClass(from: &reader)
            wrapped = try .field(&reader)
            associatedData = try .field(&reader)
            access = try AccessControl?(from: &reader)
            context = try reader.byte() == 1 ? try .field(&reader, limit: EnclaveCall.idLimit) : nil
            keychain = try UUID?(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            protection.encode(to: &writer)
            writer.appendLengthPrefixed(wrapped)
            writer.appendLengthPrefixed(associatedData)
            access.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
            keychain.encode(to: &writer)
        }
    }
}
