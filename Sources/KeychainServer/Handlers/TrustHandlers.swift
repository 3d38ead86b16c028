import KeychainModel
import KeychainPKCS12
import KeychainProtocol

// Trust evaluation: stateless, any caller (Apple's trustd serves every process).

extension Service.EvaluateTrust: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.TrustEvaluation {
        TrustEvaluator.evaluate(authorized.request)
    }
}

// PKCS#12 files: stateless, any caller; the caller gets back only what it sent.

extension Service.DecodePKCS12: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.PKCS12Contents {
        try PKCS12Codec.decode(authorized.request)
    }
}

extension Service.EncodePKCS12: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.PKCS12File {
        try PKCS12Codec.encode(authorized.request)
    }
}
