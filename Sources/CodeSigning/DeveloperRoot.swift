public import Crypto
public import FoundationEssentials
import KeychainModel
import SwiftASN1
public import X509

/// A developer root: a self-signed certificate authority that issues developer
/// certificates. Trusting one (its PEM in a developer-roots directory) lets the teams it
/// issued for sign executables the daemon believes.
public struct DeveloperRoot: Sendable {
    public let certificate: Certificate

    /// How long a local root is valid.
    public static let lifetime: TimeInterval = 20 * 365 * 86_400

    /// - Throws: `errSecDecode` unless `certificate` is a certificate authority.
    public init(_ certificate: Certificate) throws {
        guard case .isCertificateAuthority? = try? certificate.extensions.basicConstraints else {
            throw KeychainError.decode("a developer root must be a certificate authority")
        }
        self.certificate = certificate
    }

    /// A new self-signed root for the user's local teams.
    public static func create(key: P256.Signing.PrivateKey, name: String, now: Date = Date()) throws -> DeveloperRoot {
        let subject = try DistinguishedName {
            CommonName(name)
            OrganizationName("Trousseau")
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
            SubjectKeyIdentifier(hash: publicKey)
        }
        return try DeveloperRoot(Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 60, notValidAfter: now + lifetime,
            issuer: subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)))
    }

    /// Whether this root issued `leaf`: names match and the root's key signed it.
    public func issued(_ leaf: Certificate) -> Bool {
        leaf.issuer == certificate.subject && certificate.publicKey.isValidSignature(leaf.signature, for: leaf)
    }

    public func isValid(at now: Date) -> Bool {
        certificate.notValidBefore <= now && now <= certificate.notValidAfter
    }

    public var pem: String {
        get throws { try certificate.serializeAsPEM().pemString }
    }
}
