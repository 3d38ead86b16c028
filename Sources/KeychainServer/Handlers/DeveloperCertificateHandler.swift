import CodeSigning
import Crypto
import FoundationEssentials
import KeychainModel
import KeychainProtocol

extension Service.IssueDeveloperCertificate: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let request = authorized.request
        guard let key = try? P256.Signing.PublicKey(rawRepresentation: request.publicKey) else {
            throw KeychainError(status: OSStatusCode.param, message: "the public key is not a raw P-256 key")
        }
        let (certificate, root) = try daemon.localRoot.issue(
            team: try TeamIdentifier(request.team), applicationGroups: request.applicationGroups, publicKey: key)
        return Response(
            certificate: Data(try certificate.certificate.serializeAsDER()), root: Data(try root.certificate.serializeAsDER()))
    }
}
