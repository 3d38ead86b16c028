import KeychainCertificates
import KeychainKeys
import KeychainModel
import SwiftASN1

// SecCertificate is the DER bytes as NSData, read through KeychainCertificates. Its shape
// is constrained: swift-certificates, when it can import a
// module named Security, converts to and from SecCertificate. A clean build
// compiles X509 before this module (Package.swift), so it never sees it; an incremental
// rebuild of X509 may. Then it must still link in programs that do not link this module, so
// everything it uses here is emitted into the caller and SecCertificate is a Foundation class.
// (This module must not import X509: X509 importing Security would make a cycle.)

/// A certificate, held as its DER encoding.
public typealias SecCertificate = NSData

/// The DER encoding of a certificate.
@_alwaysEmitIntoClient
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(data: certificate as Data)
}

/// A certificate from its DER encoding, or nil when the bytes are not shaped as an X.509
/// certificate (a SEQUENCE of the to-be-signed SEQUENCE, the algorithm and a BIT STRING).
@_alwaysEmitIntoClient
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    let bytes = Array(data as Data)
    guard let root = try? DER.parse(bytes), root.identifier == .sequence,
        case .constructed(let nodes) = root.content
    else { return nil }
    let elements = Array(nodes)
    guard elements.count == 3, elements[0].identifier == .sequence, elements[1].identifier == .sequence,
        elements[2].identifier == .bitString
    else { return nil }
    return NSData(data: data as Data)
}

// MARK: - Reading a certificate (not emitted into clients: swift-certificates' glue never
// calls these)

/// The certificate's fields, or nil when its bytes are not a certificate.
private func fields(_ certificate: SecCertificate) -> CertificateFields? {
    try? CertificateFields(der: Array(certificate as Data))
}

/// `SecCertificateGetTypeID`: a certificate is held as its DER data (see above), so this is
/// `CFDataGetTypeID()`.
public func SecCertificateGetTypeID() -> CFTypeID { CFDataGetTypeID() }

/// A human-readable summary of the subject (`SecCertificateCopySubjectSummary`): its common
/// names, else its e-mail address, DNS name, organizational unit or organization.
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    fields(certificate)?.subjectSummary.map { NSString(string: $0) }
}

/// The subject's common name (`SecCertificateCopyCommonName`): the last, as Apple's.
/// errSecInternal (-26276) when the subject has none (SecCertificate.c).
public func SecCertificateCopyCommonName(_ certificate: SecCertificate, _ commonName: UnsafeMutablePointer<CFString?>) -> OSStatus {
    guard let fields = fields(certificate) else { return errSecParam }
    guard let last = fields.commonNames.last else { return OSStatusCode.securityInternal.rawValue }
    commonName.pointee = NSString(string: last)
    return errSecSuccess
}

/// The e-mail addresses of the SubjectAltName and the subject (`SecCertificateCopyEmailAddresses`).
public func SecCertificateCopyEmailAddresses(_ certificate: SecCertificate, _ emailAddresses: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    guard let fields = fields(certificate) else { return errSecParam }
    emailAddresses.pointee = NSArray(array: fields.emailAddresses.map { NSString(string: $0) })
    return errSecSuccess
}

/// The serial number's bytes (`SecCertificateCopySerialNumberData`).
public func SecCertificateCopySerialNumberData(_ certificate: SecCertificate, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    guard let fields = fields(certificate) else {
        KeychainError.decode("the certificate cannot be parsed").report(to: error)
        return nil
    }
    return NSData(data: Data(fields.serialNumber))
}

/// The issuer as Apple normalizes it, as a DER SEQUENCE (`SecCertificateCopyNormalizedIssuerSequence`).
public func SecCertificateCopyNormalizedIssuerSequence(_ certificate: SecCertificate) -> CFData? {
    fields(certificate).map { NSData(data: Data(sequence($0.issuer.normalizedContent))) }
}

/// The subject as Apple normalizes it, as a DER SEQUENCE (`SecCertificateCopyNormalizedSubjectSequence`).
public func SecCertificateCopyNormalizedSubjectSequence(_ certificate: SecCertificate) -> CFData? {
    fields(certificate).map { NSData(data: Data(sequence($0.subject.normalizedContent))) }
}

private func sequence(_ content: [UInt8]) -> [UInt8] {
    var serializer = DER.Serializer()
    serializer.appendConstructedNode(identifier: .sequence) { $0.serializeRawBytes(content) }
    return serializer.serializedBytes
}

/// The start of the validity period (`SecCertificateCopyNotValidBeforeDate`).
public func SecCertificateCopyNotValidBeforeDate(_ certificate: SecCertificate) -> CFDate? {
    fields(certificate).map { NSDate(timeIntervalSinceReferenceDate: $0.notValidBefore.timeIntervalSinceReferenceDate) }
}

/// The end of the validity period (`SecCertificateCopyNotValidAfterDate`).
public func SecCertificateCopyNotValidAfterDate(_ certificate: SecCertificate) -> CFDate? {
    fields(certificate).map { NSDate(timeIntervalSinceReferenceDate: $0.notValidAfter.timeIntervalSinceReferenceDate) }
}

/// The certificate's public key (`SecCertificateCopyKey`): nil unless it is an RSA or a
/// P-256/384/521 key this module can use.
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    guard let fields = fields(certificate) else { return nil }
    let type: AsymmetricKey.KeyType
    switch fields.publicKeyAlgorithm {
    case [1, 2, 840, 113_549, 1, 1, 1]: type = .rsa
    case [1, 2, 840, 10045, 2, 1]: type = .ellipticCurve
    default: return nil
    }
    return (try? AsymmetricKey(externalRepresentation: Data(fields.subjectPublicKey), type: type, keyClass: .public)).map(SecKey.init)
}
