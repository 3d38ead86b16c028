import KeychainModel
import KeychainProtocol

// Trust evaluation: stateless, any caller (Apple's trustd serves every process).

extension Service.EvaluateTrust: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.TrustEvaluation {
        TrustEvaluator.evaluate(authorized.request)
    }
}
