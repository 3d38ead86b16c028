public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Uses an enclave key the caller holds (`SecKeyCreateSignature`,
    /// `SecKeyCreateDecryptedData`, `SecKeyCopyKeyExchangeResult`): securityd passes it to
    /// the enclave, which enforces its access control against the context; when proofs are
    /// missing the error says what to prove, as for an item.
    public struct UseEnclaveKey: ServiceRequest, Codable {
        public typealias Response = EnclaveKeyOutput
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

        public func inContext(_ context: Data) -> Self {
            var request = self
            if request.context == nil { request.context = context }
            return request
        }

        public var operationPrompt: String? { prompt }
    }
}
