import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// A biometric sensor the enclave trusts: it lists the enrolled templates and reports
/// which one a scan matched. The enclave asks it directly; callers only ask the enclave.
public protocol BiometricSensor: Sendable {
    /// The identifiers of the enrolled templates (fingers); empty when none is enrolled.
    ///
    /// - Throws: `errSecNotAvailable` when the sensor cannot be reached.
    func enrolledTemplates() throws -> [String]

    /// Asks the user for a scan, showing `reason`.
    func scan(reason: String) throws -> BiometricScan
}

/// The outcome of one scan.
public enum BiometricScan: Sendable, Hashable {
    /// An enrolled template matched.
    case match(template: String)
    /// A finger that matches no enrolled template.
    case noMatch
    /// The user cancelled, or nobody touched the sensor in time.
    case cancelled
}
