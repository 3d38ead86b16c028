import Foundation
import KeychainProtocol

/// A policy a certificate chain is evaluated against (`SecPolicyRef`).
public final class SecPolicy: NSObject, @unchecked Sendable {
    // @unchecked: immutable after creation.
    let policy: Service.TrustPolicy

    init(_ policy: Service.TrustPolicy) {
        self.policy = policy
    }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? SecPolicy)?.policy == policy
    }

    public override var hash: Int { policy.hashValue }
}

/// The basic X.509 policy (`SecPolicyCreateBasicX509`): a chain to an anchor, RFC 5280's
/// constraints, validity dates, no weak keys.
public func SecPolicyCreateBasicX509() -> SecPolicy {
    SecPolicy(.basicX509)
}

/// The SSL policy (`SecPolicyCreateSSL`): the basic checks, plus, for a server's
/// certificate (`server` true), the server-authentication usage, RSA keys of 2048 bits and
/// EC keys of 256 at least, and `hostname` (a DNS name or an IP address) when given; for a
/// client's, the client-authentication usage.
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname.map { $0 as String }))
}

/// `SecPolicyGetTypeID`.
public func SecPolicyGetTypeID() -> CFTypeID { CoreFoundationType.secPolicy.rawValue }
