import KeychainCertificates
import KeychainModel
import KeychainProtocol

/// What Apple's `SecTrustSettingsSetTrustSettings` refuses (TrustSettings.cpp,
/// `validateTrustSettings`): a certificate that cannot be read, and trustRoot — stated, or
/// implied by no constraints at all — for a certificate that is not self-signed.
enum TrustSettingsRules {
    static func validate(_ record: TrustSettingsRecord) throws {
        guard let certificate = try? CertificateFields(der: Array(record.certificate)) else {
            throw KeychainError(status: OSStatusCode.decode, message: "the certificate cannot be parsed")
        }
        let claimsRoot = record.constraints.isEmpty || record.constraints.contains { ($0.result ?? .trustRoot) == .trustRoot }
        if claimsRoot, !certificate.isSelfIssued {
            throw KeychainError.param("trustRoot is for a self-signed certificate; this one is issued by another (use trustAsRoot)")
        }
    }
}
