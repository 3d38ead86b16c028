public import FoundationEssentials
public import KeychainModel

extension EnclaveCall {
    /// Uses an enclave key: the enclave unwraps it (the class must be available), checks
    /// its access control against the context's proofs, runs the operation, and forgets
    /// the key.
    public struct UseEnclaveKey: EnclaveRequest, Codable {
        public typealias Response = EnclaveKeyOutput
        public static let mayChangeAvailableKeys = false

        public var blob: Data
        public var operation: EnclaveKeyOperation
        public var context: Data?

        public init(blob: Data, operation: EnclaveKeyOperation, context: Data?) {
            self.blob = blob
            self.operation = operation
            self.context = context
        }
    }

}
