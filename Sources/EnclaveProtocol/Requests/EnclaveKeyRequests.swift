public import FoundationEssentials
public import KeychainModel

extension EnclaveCall {
    /// Makes a P-256 private key inside the enclave (`kSecAttrTokenIDSecureEnclave`) and
    /// returns it wrapped: only its public key is readable outside.
    public struct CreateEnclaveKey: EnclaveRequest {
        public typealias Response = EnclaveKeyCreated
        public static let opcode: UInt8 = 40
        public static let mayChangeAvailableKeys = false

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
            context = try reader.byte() == 1 ? try .field(&reader, limit: EnclaveCall.idLimit) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            protection.encode(to: &writer)
            access.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        }
    }

    /// The new key: ``EnclaveKeyBlob/data``.
    public struct EnclaveKeyCreated: WireCodable {
        public var blob: Data

        public init(blob: Data) { self.blob = blob }
        public init(from reader: inout ByteReader) throws { blob = try .field(&reader) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(blob) }
    }

    /// Uses an enclave key: the enclave unwraps it (the class must be available), checks
    /// its access control against the context's proofs, runs the operation, and forgets
    /// the key.
    public struct UseEnclaveKey: EnclaveRequest {
        public typealias Response = EnclaveKeyOutput
        public static let opcode: UInt8 = 41
        public static let mayChangeAvailableKeys = false

        public var blob: Data
        public var operation: EnclaveKeyOperation
        public var context: Data?

        public init(blob: Data, operation: EnclaveKeyOperation, context: Data?) {
            self.blob = blob
            self.operation = operation
            self.context = context
        }

        public init(from reader: inout ByteReader) throws {
            blob = try .field(&reader)
            operation = try EnclaveKeyOperation(from: &reader)
            context = try reader.byte() == 1 ? try .field(&reader, limit: EnclaveCall.idLimit) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(blob)
            operation.encode(to: &writer)
            writer.appendOptional(context) { $1.appendLengthPrefixed($0) }
        }
    }

    /// What an operation produced (a signature, a plaintext, a shared secret), in zeroing
    /// storage: a plaintext or a shared secret is secret.
    public struct EnclaveKeyOutput: WireCodable {
        public var output: SecretBytes

        public init(_ output: SecretBytes) { self.output = output }
        public init(from reader: inout ByteReader) throws { output = try reader.secret(limit: EnclaveCall.blobLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendSecret(output) }
    }
}
