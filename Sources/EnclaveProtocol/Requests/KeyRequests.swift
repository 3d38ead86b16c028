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
    public struct IndexKey: EnclaveRequest, Codable {
        public typealias Response = Key
        public static let mayChangeAvailableKeys = false
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID? = nil

        public init(keychain: UUID? = nil) {
            self.keychain = keychain
        }
    }

    /// The metadata key of a class.
    public struct MetadataKey: EnclaveRequest, Codable {
        public typealias Response = Key
        public static let mayChangeAvailableKeys = false
        public var protection: ProtectionClass
        /// The file keychain whose key to use; nil: the keybag's.
        public var keychain: UUID?

        public init(_ protection: ProtectionClass, keychain: UUID? = nil) {
            self.protection = protection
            self.keychain = keychain
        }
    }

    /// Wraps a per-item key under a class key, binding an access control when given.
    public struct WrapItemKey: EnclaveRequest, Codable {
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

        /// The wrapped key, and the access control as it must be stored.
        public struct Response: WireCodable, Codable {
            public var wrapped: Data
            public var access: AccessControl?

            public init(wrapped: Data, access: AccessControl?) {
                self.wrapped = wrapped
                self.access = access
            }
        }
    }

    /// Unwraps a per-item key, once the context has proven what its access control asks.
    public struct UnwrapItemKey: EnclaveRequest, Codable {
        public typealias Response = Key
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
    }
}
