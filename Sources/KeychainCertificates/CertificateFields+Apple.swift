import Crypto
public import FoundationEssentials
public import KeychainModel
import SwiftASN1

// Apple's readings of a certificate (SecCertificate.c): the subject summary, common names,
// e-mail addresses, and the attributes a certificate item gets when it is added.

extension CertificateFields {
    /// `SecCertificateCopySubjectSummary`: every common name, last first and comma
    /// separated — else the most desired of organizational unit, organization and any other
    /// attribute — with " (description)" after common names; without a common name, the
    /// first e-mail address, else the first DNS name, wins.
    public var subjectSummary: String? {
        enum Kind: Int { case none, printable, organization, organizationalUnit, commonName }
        var kind = Kind.none
        var summary: String?
        var description: String?
        for attribute in subject.attributes {
            var found = Kind.printable
            var text = attribute.value
            switch attribute.type {
            case NameAttributeType.commonName: found = .commonName
            case NameAttributeType.organizationalUnitName: found = .organizationalUnit
            case NameAttributeType.organizationName: found = .organization
            case NameAttributeType.description:
                if let value = attribute.value { description = description.map { "\(value), \($0)" } ?? value }
            default: break
            }
            guard kind.rawValue <= found.rawValue, let value = text else { text = nil; continue }
            summary = kind == found ? "\(value), \(summary ?? "")" : value
            kind = found
        }
        if let description, kind == .commonName, let name = summary { summary = "\(name) (\(description))" }
        if kind != .commonName, let name = emailAddresses.first ?? alternativeDNSNames.first { summary = name }
        return summary
    }

    /// The subject's common names, in order.
    public var commonNames: [String] { subject.values(of: NameAttributeType.commonName) }

    /// `SecCertificateCopyEmailAddresses`: the SubjectAltName's rfc822Names, then the
    /// subject's emailAddress attributes.
    public var emailAddresses: [String] { alternativeEmails + subject.values(of: NameAttributeType.emailAddress) }

    /// `kSecAttrPublicKeyHash`: SHA-1 of the subjectPublicKey bits, which equals the
    /// `kSecAttrApplicationLabel` of the matching key (the identity join).
    public var publicKeyHash: Data { Data(Insecure.SHA1.hash(data: subjectPublicKey)) }

    /// The attributes Apple gives a certificate item (`SecCertificateCopyAttributeDictionary`):
    /// type (the X.509 version), encoding (DER), normalized subject and issuer, serial number,
    /// subject key identifier, public-key hash and the DER itself; the label is the subject
    /// summary, used when the caller gives none.
    public var itemAttributes: [String: KeychainValue] {
        var attributes: [String: KeychainValue] = [
            SecName.kSecClass: .string(SecName.kSecClassCertificate),
            SecName.kSecAttrCertificateType: .number(Int64(version)),
            SecName.kSecAttrCertificateEncoding: .number(3),  // CSSM_CERT_ENCODING_DER
            SecName.kSecAttrSubject: .data(Data(subject.normalizedContent)),
            SecName.kSecAttrIssuer: .data(Data(issuer.normalizedContent)),
            SecName.kSecAttrSerialNumber: .data(Data(serialNumber)),
            SecName.kSecAttrPublicKeyHash: .data(publicKeyHash),
            SecName.kSecValueData: .data(Data(der)),
        ]
        if let subjectKeyIdentifier { attributes[SecName.kSecAttrSubjectKeyID] = .data(Data(subjectKeyIdentifier)) }
        if let subjectSummary { attributes[SecName.kSecAttrLabel] = .string(subjectSummary) }
        return attributes
    }
}
