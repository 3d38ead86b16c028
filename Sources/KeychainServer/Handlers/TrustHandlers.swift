import KeychainModel
import KeychainPKCS12
import KeychainProtocol

// Trust evaluation: stateless, any caller (Apple's trustd serves every process).

extension Service.EvaluateTrust: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.TrustEvaluation {
        try authorized.request.validate()
        return TrustEvaluator.evaluate(authorized.request, settings: daemon.trustEvaluationSettings())
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

// Trust settings: changed by the security tool only (the authorization says so), read by anyone.

extension Service.SetTrustSettings: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        let request = authorized.request
        try TrustSettingsRules.validate(request.record)
        try daemon.trustSettings.set(request.record, in: request.domain, caller: authorized.caller)
        return NoResult()
    }
}

extension Service.RemoveTrustSettings: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.trustSettings.remove(authorized.request.certificate, from: authorized.request.domain, caller: authorized.caller)
        return NoResult()
    }
}

extension Service.CopyTrustSettings: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.TrustSettingsList {
        let records = try daemon.trustSettings.records(authorized.request.domain)
        // SecTrustSettingsCopyCertificates: a domain without settings is an error.
        guard !records.isEmpty else { throw KeychainError(status: OSStatusCode.noTrustSettings) }
        return Service.TrustSettingsList(records: records)
    }
}
