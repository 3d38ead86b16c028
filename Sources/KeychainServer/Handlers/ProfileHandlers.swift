import FoundationEssentials
import KeychainModel
import KeychainProtocol

// Configuration profiles: the security tool only (the authorization says so). A signed
// profile is verified when its signer's chain is trusted as a basic X.509 chain by this
// daemon's evaluation (System Roots, trust settings, installed profiles' roots).

extension Service.InstallProfile: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> ProfileRecord {
        try daemon.profiles.install(authorized.request.file) { chain in
            let evaluation = TrustEvaluator.evaluate(
                Service.EvaluateTrust(certificates: chain, policies: [.basicX509], anchors: [], trustsSystemRoots: true, verifyDate: Date()),
                settings: daemon.trustEvaluationSettings())
            return evaluation.status == .success
        }
    }
}

extension Service.RemoveProfile: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.profiles.remove(authorized.request.identifier)
        return NoResult()
    }
}

extension Service.CopyProfiles: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.ProfileList {
        Service.ProfileList(profiles: try daemon.profiles.records())
    }
}
