import SwiftASN1

// Certificates are items of a later step; this much exists because swift-certificates, when
// it can import a module named Security, converts to and from SecCertificate. A clean build
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
