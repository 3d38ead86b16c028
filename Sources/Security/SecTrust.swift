import Dispatch
import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol

/// `SecTrustResultType`, with Apple's raw values.
public enum SecTrustResultType: UInt32, Sendable {
    case invalid = 0
    case proceed = 1
    @available(*, deprecated)
    case confirm = 2
    case deny = 3
    case unspecified = 4
    case recoverableTrustFailure = 5
    case fatalTrustFailure = 6
    case otherError = 7
}

/// `SecTrustEvaluateAsyncWithError`'s completion.
public typealias SecTrustWithErrorCallback = @Sendable (SecTrust, Bool, CFError?) -> Void

/// A certificate chain to evaluate and what it is evaluated against (`SecTrustRef`).
///
/// Evaluation happens in securityd, as Apple's happens in trustd: it builds the chain to an
/// anchor (the caller's, and the system's roots unless the caller's are the only ones) and
/// applies the policies; the result is kept until something changes.
public final class SecTrust: NSObject, @unchecked Sendable {
    // @unchecked: every field is guarded by `state`.
    struct State {
        var certificates: [Data]
        var policies: [Service.TrustPolicy]
        var anchors: [Data]?
        var anchorsOnly = true
        var verifyDate: Date?
        var evaluation: Service.TrustEvaluation?
    }

    let state: BlockingMutex<State>

    init(certificates: [Data], policies: [Service.TrustPolicy]) {
        state = BlockingMutex(State(certificates: certificates, policies: policies))
    }

    /// Changes the trust and forgets the last evaluation.
    func update(_ change: (inout State) -> Void) {
        state.withLock {
            change(&$0)
            $0.evaluation = nil
        }
    }

    /// The evaluation, made now if there is none.
    func evaluation() throws(KeychainError) -> Service.TrustEvaluation {
        let (cached, request) = state.withLock { state -> (Service.TrustEvaluation?, Service.EvaluateTrust) in
            let request = Service.EvaluateTrust(
                certificates: state.certificates, policies: state.policies.isEmpty ? [.basicX509] : state.policies,
                anchors: state.anchors ?? [], trustsSystemRoots: state.anchors == nil || !state.anchorsOnly,
                verifyDate: state.verifyDate ?? Date())
            return (state.evaluation, request)
        }
        if let cached { return cached }
        let evaluation = try ProcessKeychain.keychain.evaluateTrust(request)
        state.withLock { $0.evaluation = evaluation }
        return evaluation
    }
}

/// One certificate or an array of them (at least one unless `allowsNone`), as their DER.
private func certificates(_ value: CFTypeRef, allowsNone: Bool = false) -> [Data]? {
    if let one = value as? NSData, !(value is NSArray) { return [one as Data] }
    guard let array = value as? [AnyObject], allowsNone || !array.isEmpty else { return nil }
    let data = array.compactMap { ($0 as? NSData).map { $0 as Data } }
    return data.count == array.count ? data : nil
}

private func policies(_ value: CFTypeRef?) -> [Service.TrustPolicy]? {
    guard let value else { return [] }
    if let one = value as? SecPolicy { return [one.policy] }
    guard let array = value as? [AnyObject] else { return nil }
    let policies = array.compactMap { ($0 as? SecPolicy)?.policy }
    return policies.count == array.count ? policies : nil
}

/// A trust for a certificate, or an array of them leaf first, and a policy or an array of
/// them (`SecTrustCreateWithCertificates`).
public func SecTrustCreateWithCertificates(_ certificates: CFTypeRef, _ policies: CFTypeRef?, _ trust: UnsafeMutablePointer<SecTrust?>) -> OSStatus {
    guard let chain = Security.certificates(certificates), let evaluated = Security.policies(policies) else { return errSecParam }
    trust.pointee = SecTrust(certificates: chain, policies: evaluated)
    return errSecSuccess
}

/// Replaces the policies (`SecTrustSetPolicies`).
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    guard let evaluated = Security.policies(policies) else { return errSecParam }
    trust.update { $0.policies = evaluated }
    return errSecSuccess
}

/// Sets the anchors (`SecTrustSetAnchorCertificates`): from then on they are the only ones,
/// unless `SecTrustSetAnchorCertificatesOnly(trust, false)`; nil restores the system's.
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    guard let anchorCertificates else {
        trust.update {
            $0.anchors = nil
            $0.anchorsOnly = true
        }
        return errSecSuccess
    }
    guard let anchors = Security.certificates(anchorCertificates, allowsNone: true) else { return errSecParam }
    trust.update {
        $0.anchors = anchors
        $0.anchorsOnly = true
    }
    return errSecSuccess
}

/// Whether only the caller's anchors are trusted (`SecTrustSetAnchorCertificatesOnly`);
/// false adds the system's roots back.
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.update {
        $0.anchorsOnly = anchorCertificatesOnly
        if $0.anchors == nil, !anchorCertificatesOnly { $0.anchors = [] }
    }
    return errSecSuccess
}

/// The time the chain must be valid at (`SecTrustSetVerifyDate`); now by default.
public func SecTrustSetVerifyDate(_ trust: SecTrust, _ verifyDate: CFDate) -> OSStatus {
    trust.update { $0.verifyDate = verifyDate as Date }
    return errSecSuccess
}

/// Evaluates the trust (`SecTrustEvaluateWithError`): true when the chain is trusted for
/// every policy; otherwise false and an `NSOSStatusErrorDomain` error whose code is the
/// status of the most important failed check, described as Apple describes it.
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    do {
        let evaluation = try trust.evaluation()
        guard evaluation.status == .success else {
            error?.pointee = NSError(
                domain: NSOSStatusErrorDomain, code: Int(evaluation.status.rawValue), userInfo: [NSLocalizedDescriptionKey: evaluation.message])
            return false
        }
        return true
    } catch let failure {
        error?.pointee = NSError(domain: NSOSStatusErrorDomain, code: Int(failure.status.rawValue), userInfo: [NSLocalizedDescriptionKey: failure.message])
        return false
    }
}

/// Evaluates on another thread and calls `result` on `queue` (`SecTrustEvaluateAsyncWithError`).
public func SecTrustEvaluateAsyncWithError(_ trust: SecTrust, _ queue: DispatchQueue, _ result: @escaping SecTrustWithErrorCallback) -> OSStatus {
    DispatchQueue.global().async {
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        let failure = error.map { UncheckedError($0) }
        queue.async { result(trust, trusted, failure?.error) }
    }
    return errSecSuccess
}

/// Carries an `NSError` (not marked Sendable, never mutated) across the queue hop.
private struct UncheckedError: @unchecked Sendable {
    let error: CFError
    init(_ error: CFError) { self.error = error }
}

/// The last evaluation's result (`SecTrustGetTrustResult`), evaluating first if needed.
public func SecTrustGetTrustResult(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>) -> OSStatus {
    do {
        result.pointee = SecTrustResultType(rawValue: UInt32(try trust.evaluation().result)) ?? .invalid
        return errSecSuccess
    } catch {
        return error.status.rawValue
    }
}

/// The chain the evaluation built, leaf first (`SecTrustCopyCertificateChain`).
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    guard let chain = try? trust.evaluation().chain else { return nil }
    return NSArray(array: chain.map { NSData(data: $0) })
}

/// The number of certificates in the chain (`SecTrustGetCertificateCount`): the evaluated
/// chain's, or before evaluation, the certificates given.
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex {
    trust.state.withLock { $0.evaluation?.chain.count ?? $0.certificates.count }
}

/// The leaf's public key (`SecTrustCopyKey`).
public func SecTrustCopyKey(_ trust: SecTrust) -> SecKey? {
    let leaf = trust.state.withLock { $0.certificates[0] }
    return SecCertificateCopyKey(NSData(data: leaf))
}

/// `SecTrustGetTypeID`.
public func SecTrustGetTypeID() -> CFTypeID { CoreFoundationType.secTrust.rawValue }
