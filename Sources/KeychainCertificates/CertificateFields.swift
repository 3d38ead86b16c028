public import FoundationEssentials
public import SwiftASN1

/// The fields of a DER X.509 certificate that Apple's `SecCertificate` functions and the
/// keychain's certificate attributes read.
///
/// Parsed with swift-asn1 rather than swift-certificates on purpose: the `Security` module
/// uses this, and must not depend on swift-certificates (docs/ARCHITECTURE.md, "certificates
/// stay out of Security"). Any public-key algorithm is accepted, as Apple accepts it; the
/// signature is not checked here (that is trust evaluation's job).
public struct CertificateFields: Sendable {
    public let der: [UInt8]
    /// 1, 2 or 3.
    public let version: Int
    /// The serial number's INTEGER content bytes, as Apple stores `kSecAttrSerialNumber`.
    public let serialNumber: [UInt8]
    public let issuer: DistinguishedName
    public let subject: DistinguishedName
    public let notValidBefore: Date
    public let notValidAfter: Date
    /// The SubjectPublicKeyInfo's encoding, its algorithm and the subjectPublicKey BIT STRING's bytes.
    public let subjectPublicKeyInfo: [UInt8]
    public let publicKeyAlgorithm: ASN1ObjectIdentifier
    public let subjectPublicKey: [UInt8]
    /// The SubjectKeyIdentifier extension's key identifier, when present.
    public let subjectKeyIdentifier: [UInt8]?
    /// rfc822Name and dNSName entries of the SubjectAltName extension, in order.
    public let alternativeEmails: [String]
    public let alternativeDNSNames: [String]

    /// Parses `der`; throws for anything that is not a DER X.509 certificate.
    public init(der: [UInt8]) throws {
        self.der = der
        let root = try DER.parse(der)
        guard root.identifier == .sequence, case .constructed(let parts) = root.content else { throw ASN1Error.unexpectedFieldType(root.identifier) }
        var certificate = parts.makeIterator()
        guard let tbs = certificate.next(), tbs.identifier == .sequence, case .constructed(let fields) = tbs.content,
            let algorithm = certificate.next(), algorithm.identifier == .sequence,
            let signature = certificate.next(), signature.identifier == .bitString, certificate.next() == nil
        else { throw ASN1Error.invalidASN1Object(reason: "a certificate is a TBSCertificate, an algorithm and a signature") }

        var iterator = fields.makeIterator()
        var next = iterator.next()
        let versionTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        if let node = next, node.identifier == versionTag {
            guard case .constructed(let inner) = node.content, let integer = inner.first(where: { _ in true }) else {
                throw ASN1Error.invalidASN1Object(reason: "version")
            }
            version = try Int(derEncoded: integer) + 1
            next = iterator.next()
        } else {
            version = 1
        }
        guard let serial = next, serial.identifier == .integer, case .primitive(let serialBytes) = serial.content else {
            throw ASN1Error.invalidASN1Object(reason: "serial number")
        }
        serialNumber = Array(serialBytes)
        guard iterator.next()?.identifier == .sequence, let issuerNode = iterator.next(), let validity = iterator.next(),
            let subjectNode = iterator.next(), let spki = iterator.next()
        else { throw ASN1Error.invalidASN1Object(reason: "a TBSCertificate is missing fields") }
        issuer = try DistinguishedName(derEncoded: issuerNode)
        subject = try DistinguishedName(derEncoded: subjectNode)
        (notValidBefore, notValidAfter) = try Self.validity(validity)

        guard spki.identifier == .sequence, case .constructed(let keyParts) = spki.content else { throw ASN1Error.invalidASN1Object(reason: "subjectPublicKeyInfo") }
        var keyIterator = keyParts.makeIterator()
        guard let keyAlgorithm = keyIterator.next(), keyAlgorithm.identifier == .sequence, case .constructed(let algorithmParts) = keyAlgorithm.content,
            let oid = algorithmParts.first(where: { _ in true }), let bits = keyIterator.next()
        else { throw ASN1Error.invalidASN1Object(reason: "subjectPublicKeyInfo") }
        publicKeyAlgorithm = try ASN1ObjectIdentifier(derEncoded: oid)
        subjectPublicKey = Array(try ASN1BitString(derEncoded: bits).bytes)
        var keyInfo = DER.Serializer()
        keyInfo.serialize(spki)
        subjectPublicKeyInfo = keyInfo.serializedBytes

        var keyIdentifier: [UInt8]?
        var emails: [String] = []
        var dnsNames: [String] = []
        let extensionsTag = ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)
        while let node = iterator.next() {
            guard node.identifier == extensionsTag, case .constructed(let wrapped) = node.content,
                let list = wrapped.first(where: { _ in true }), case .constructed(let extensions) = list.content
            else { continue }  // issuerUniqueID / subjectUniqueID
            for item in extensions {
                guard case .constructed(let parts) = item.content else { continue }
                let elements = Array(parts)
                guard let first = elements.first, let value = elements.last, elements.count >= 2 else { continue }
                let id = try ASN1ObjectIdentifier(derEncoded: first)
                let octets = try ASN1OctetString(derEncoded: value).bytes
                switch id {
                case [2, 5, 29, 14]:
                    keyIdentifier = Array(try ASN1OctetString(derEncoded: Array(octets)).bytes)
                case [2, 5, 29, 17]:
                    (emails, dnsNames) = try Self.alternativeNames(Array(octets))
                default:
                    break
                }
            }
        }
        subjectKeyIdentifier = keyIdentifier
        alternativeEmails = emails
        alternativeDNSNames = dnsNames
    }

    private static func validity(_ node: ASN1Node) throws -> (Date, Date) {
        guard node.identifier == .sequence, case .constructed(let times) = node.content else { throw ASN1Error.invalidASN1Object(reason: "validity") }
        let dates = try times.map(date(_:))
        guard dates.count == 2 else { throw ASN1Error.invalidASN1Object(reason: "validity") }
        return (dates[0], dates[1])
    }

    private static func date(_ node: ASN1Node) throws -> Date {
        let parts: (year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int)
        switch node.identifier {
        case .utcTime:
            let time = try UTCTime(derEncoded: node)
            parts = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        case .generalizedTime:
            let time = try GeneralizedTime(derEncoded: node)
            parts = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        default:
            throw ASN1Error.unexpectedFieldType(node.identifier)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let components = DateComponents(year: parts.year, month: parts.month, day: parts.day, hour: parts.hours, minute: parts.minutes, second: parts.seconds)
        guard let date = calendar.date(from: components) else { throw ASN1Error.invalidASN1Object(reason: "a date") }
        return date
    }

    /// rfc822Name [1] and dNSName [2] of GeneralNames.
    private static func alternativeNames(_ der: [UInt8]) throws -> ([String], [String]) {
        let root = try DER.parse(der)
        guard case .constructed(let names) = root.content else { return ([], []) }
        var emails: [String] = [], dns: [String] = []
        for name in names {
            guard name.identifier.tagClass == .contextSpecific, case .primitive(let bytes) = name.content,
                let text = String(validating: bytes, as: UTF8.self)
            else { continue }
            if name.identifier.tagNumber == 1 { emails.append(text) }
            if name.identifier.tagNumber == 2 { dns.append(text) }
        }
        return (emails, dns)
    }
}

extension CertificateFields {
    /// The public key's size: an RSA modulus's bits, or a named curve's (P-256, P-384,
    /// P-521); nil for other keys. Read from the DER, so keys of any size have one.
    public var publicKeySizeInBits: Int? {
        switch publicKeyAlgorithm {
        case [1, 2, 840, 113_549, 1, 1, 1]:
            guard let key = try? DER.parse(subjectPublicKey), case .constructed(let parts) = key.content,
                let modulus = parts.first(where: { _ in true }), case .primitive(let bytes) = modulus.content,
                let first = bytes.firstIndex(where: { $0 != 0 })
            else { return nil }
            return (bytes.endIndex - first - 1) * 8 + (8 - bytes[first].leadingZeroBitCount)
        case [1, 2, 840, 10045, 2, 1]:
            switch subjectPublicKey.count {
            case 65: return 256
            case 97: return 384
            case 133: return 521
            default: return nil
            }
        default:
            return nil
        }
    }

    /// Whether it is RSA (`true`), elliptic-curve (`false`) or other (nil).
    public var isRSA: Bool? {
        switch publicKeyAlgorithm {
        case [1, 2, 840, 113_549, 1, 1, 1]: true
        case [1, 2, 840, 10045, 2, 1]: false
        default: nil
        }
    }

    /// Whether its issuer is its subject (a root, or a certificate posing as one).
    public var isSelfIssued: Bool { issuer.normalizedContent == subject.normalizedContent }
}
