import FoundationEssentials
public import KeychainModel

extension Service {
    /// An escrow keybag of the class C keys for a designated agent.
    public struct CreateEscrow: ServiceRequest, Codable {
        public typealias Response = KeybagCall.EscrowCreated
        public static let authorization = Authorization.securityToolWithPresence(operation: "making an escrow keybag")

        public init() {}
    }
}
