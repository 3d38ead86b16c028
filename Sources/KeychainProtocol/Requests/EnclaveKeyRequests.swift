public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Makes a P-256 key in the enclave (`SecKeyCreateRandomKey` with
    /// `kSecAttrTokenIDSecureEnclave`): any caller; the caller gets the key's blob, which
    /// it keeps (and may store as a key item).
    public struct CreateEnclaveKey: ServiceRequest {
        public typealias Response = EnclaveKeyCreated
        public static let opcode: UInt8 = 76
        public static let authorization = Authorization.anyCaller

        /// Always a ThisDeviceOnly class: an enclave key cannot leave the device.
        public var protection: ProtectionClass
        public var access: AccessControl?
        public var context: Data?

        public init(protection: ProtectionClass, access: AccessControl?, context: Data?) {
            self.protection = protection
            self.access = access
            self.context = context
        }

        public init(from reader: inout ByteReader) throws {
            protection = try ProtectionClass(from: &reader)
            access = try AccessControl?(from: &reader)
            context = try reader.byte() == 1 ? try reader.lengthPrefixed(limit: 64) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            protection.encode(to: &writer)
            access.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        }

        public func inContext(_ context: Data) -> Self {
            var request = self
            if request.context == nil { request.context = context }
            return request
        }
    }

    /// The new key's blob (``EnclaveKeyBlob/data``).
    public struct EnclaveKeyCreated: WireCodable {
        public var blob: Data

        public init(blob: Data) { self.blob = blob }
        public init(from reader: inout ByteReader) throws { blob = try reader.lengthPrefixed(limit: 4096) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(blob) }
    }

    /// Uses an enclave key the caller holds (`SecKeyCreateSignature`,
    /// `SecKeyCreateDecryptedData`, `SecKeyCopyKeyExchangeResult`): securityd passes it to
    /// the enclave, which enforces its access control against the context; when proofs are
    /// missing the error says what to prove, as for an item.
    public struct UseEnclaveKey: ServiceRequest {
        public typealias Response = EnclaveKeyOutput
        public static let opcode: UInt8 = 77
        public static let authorization = Authorization.anyCaller

        public var blob: Data
        public var operation: EnclaveKeyOperation
        public var context: Data?
        public var prompt: String?

        public init(blob: Data, operation: EnclaveKeyOperation, context: Data?, prompt: String? = nil) {
            self.blob = blob
            self.operation = operation
            self.context = context
            self.prompt = prompt
        }

        public init(from reader: inout ByteReader) throws {
            blob = try reader.lengthPrefixed(limit: 4096)
            operation = try EnclaveKeyOperation(from: &reader)
            context = try reader.byte() == 1 ? try reader.lengthPrefixed(limit: 64) : nil
            prompt = try reader.byte() == 1 ? try reader.string(limit: 1024) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(blob)
            operation.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
            writer.appendOptional(prompt) { $1.appendLengthPrefixed($0) }
        }

        public func inContext(_ context: Data) -> Self {
            var request = self
            if request.context == nil { request.context = context }
            return request
        }

        public var operationPrompt: String? { prompt }
    }

    /// What the operation produced, in zeroing storage.
    public struct EnclaveKeyOutput: WireCodable {
        public var output: SecretBytes

        public init(_ output: SecretBytes) { self.output = output }
        public init(from reader: inout ByteReader) throws { output = try reader.secret(limit: 2 << 20) }
        public func encode(to writer: inout ByteWriter) { writer.appendSecret(output) }
    }
}
