public import Crypto
public import FoundationEssentials
import KeychainModel
import SwiftASN1
public import X509

/// A developer certificate: a P-256 key of one team (Team ID in the subject's OU, as
/// Apple's are), for code signing, issued by a developer root that also lists the
/// application groups it registered to the team.
public struct DeveloperCertificate: Sendable {
    public let certificate: Certificate
    public let team: TeamIdentifier
    /// Application groups outside the team's namespace that the root registered to it.
    public let applicationGroups: [String]

    /// The extension in which a root lists a team's application groups: a SEQUENCE OF
    /// UTF8String. Under the UUID arc 2.25 with a random number of our own; a registered
    /// arc would replace it.
    public static let applicationGroupsExtension: ASN1ObjectIdentifier = [2, 25, 334_523_755_516_151_198, 1]

    /// How long an issued developer certificate is valid, as Apple's are: one year.
    public static let lifetime: TimeInterval = 365 * 86_400

    /// Reads the team and application groups of a certificate.
    ///
    /// - Throws: `errSecDecode` when it is not a developer certificate: no Team ID, not for
    ///   code signing, or a CA.
    public init(_ certificate: Certificate) throws {
        let unit = certificate.subject.flatMap { $0 }
            .first { $0.type == .RDNAttributeType.organizationalUnitName }
            .flatMap { String($0.value) }
        guard let unit, let team = try? TeamIdentifier(unit) else {
            throw KeychainError.decode("the certificate names no Team ID")
        }
        let extensions = certificate.extensions
        guard (try? extensions.extendedKeyUsage)??.contains(.codeSigning) == true else {
            throw KeychainError.decode("the certificate is not for code signing")
        }
        if case .isCertificateAuthority? = try? extensions.basicConstraints {
            throw KeychainError.decode("a certificate authority is not a developer certificate")
        }
        var groups: [String] = []
        if let registered = extensions[oid: Self.applicationGroupsExtension] {
            do {
                let node = try DER.parse(registered.value)
                groups = try DER.sequence(of: ASN1UTF8String.self, identifier: .sequence, rootNode: node).map { String($0) }
            } catch {
                throw KeychainError.decode("the application groups of the certificate are malformed")
            }
        }
        self.certificate = certificate
        self.team = team
        self.applicationGroups = groups
    }

    /// Issues a developer certificate for `team` under a root.
    ///
    /// - Throws: `errSecParam` for an application group not named "group.…" (Apple's form,
    ///   which keeps registered groups out of every team's and Trousseau's own namespaces).
    public static func issue(
        team: TeamIdentifier, applicationGroups: [String], publicKey: P256.Signing.PublicKey,
        root: DeveloperRoot, rootKey: P256.Signing.PrivateKey, now: Date = Date()
    ) throws -> DeveloperCertificate {
        if let group = applicationGroups.first(where: { !$0.hasPrefix("group.") || $0.count <= "group.".count }) {
            throw KeychainError(status: OSStatusCode.param, message: "an application group is named \"group.…\", not \"\(group)\"")
        }
        let subject = try DistinguishedName {
            CommonName("Trousseau Developer: \(team)")
            OrganizationalUnitName(team.rawValue)
            OrganizationName("Trousseau")
        }
        var groupsDER = DER.Serializer()
        try groupsDER.serializeSequenceOf(applicationGroups.map { ASN1UTF8String($0) })
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.codeSigning])
            SubjectKeyIdentifier(hash: Certificate.PublicKey(publicKey))
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey)).keyIdentifier)
            Certificate.Extension(oid: applicationGroupsExtension, critical: false, value: groupsDER.serializedBytes[...])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(publicKey),
            notValidBefore: now - 60, notValidAfter: now + lifetime,
            issuer: root.certificate.subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        return try DeveloperCertificate(certificate)
    }

    /// Whether `now` is inside the certificate's validity.
    public func isValid(at now: Date) -> Bool {
        certificate.notValidBefore <= now && now <= certificate.notValidAfter
    }
}
