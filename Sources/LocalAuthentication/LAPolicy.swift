/// What `LAContext.evaluatePolicy` asks the user to show.
public enum LAPolicy: Int, Sendable {
    /// A finger on the sensor the enclave trusts.
    case deviceOwnerAuthenticationWithBiometrics = 1
    /// A finger, or the keychain passcode.
    case deviceOwnerAuthentication = 2
    /// A paired watch: not available on Linux.
    case deviceOwnerAuthenticationWithWatch = 3
    /// A finger or a paired watch (the watch is not available on Linux).
    case deviceOwnerAuthenticationWithBiometricsOrWatch = 4
}

/// A credential set on a context with `LAContext.setCredential(_:type:)`.
public enum LACredentialType: Int, Sendable {
    /// The application password of items whose access control requires one.
    case applicationPassword = 0
}

/// The kind of biometry the enclave's sensor offers.
public enum LABiometryType: Int, Sendable {
    case none = 0
    /// A fingerprint sensor (fprintd, or the test sensor): Apple's name for fingerprints.
    case touchID = 1
    case faceID = 2
    case opticID = 4
}

/// The longest reuse window a context may have.
public let LATouchIDAuthenticationMaximumAllowableReuseDuration: Double = 300

#if !canImport(Darwin)
import Foundation

/// Where an out-parameter error goes, as Foundation on Apple's platforms declares it.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
#endif
