import FoundationEssentials
public import SwiftASN1

/// An X.501 name as Apple's Security reads it: its attributes in order, their string
/// values, and the normalized form Apple stores as `kSecAttrSubject` / `kSecAttrIssuer`.
public struct DistinguishedName: Sendable, Hashable {
    /// One attribute: its type and its value decoded as text (nil when the value is not a
    /// string type).
    public struct Attribute: Sendable, Hashable {
        public let type: ASN1ObjectIdentifier
        public let value: String?
    }

    /// The name's DER encoding (the SEQUENCE).
    public let encoded: [UInt8]
    /// Every attribute, in the order of the RDN sequence.
    public let attributes: [Attribute]
    /// The normalized content: the RDNs without the outer SEQUENCE, PrintableString values
    /// upper-cased with runs of blanks made one space and the ends trimmed
    /// (`createNormalizedX501Name`, after RFC 5280's rules for PrintableString).
    public let normalizedContent: [UInt8]

    public init(derEncoded node: ASN1Node) throws {
        guard node.identifier == .sequence, case .constructed(let rdns) = node.content else {
            throw ASN1Error.unexpectedFieldType(node.identifier)
        }
        var attributes: [Attribute] = []
        var normalized = DER.Serializer()
        for rdn in rdns {
            guard rdn.identifier == .set, case .constructed(let pairs) = rdn.content else { throw ASN1Error.unexpectedFieldType(rdn.identifier) }
            var any = false
            try normalized.appendConstructedNode(identifier: .set) { set in
                for pair in pairs {
                    any = true
                    guard pair.identifier == .sequence, case .constructed(let fields) = pair.content else {
                        throw ASN1Error.unexpectedFieldType(pair.identifier)
                    }
                    var iterator = fields.makeIterator()
                    guard let typeNode = iterator.next(), let value = iterator.next(), iterator.next() == nil else {
                        throw ASN1Error.invalidASN1Object(reason: "an attribute is a type and a value")
                    }
                    let type = try ASN1ObjectIdentifier(derEncoded: typeNode)
                    attributes.append(Attribute(type: type, value: Self.text(value)))
                    try set.appendConstructedNode(identifier: .sequence) { sequence in
                        try sequence.serialize(type)
                        if value.identifier == .printableString, case .primitive(let bytes) = value.content {
                            sequence.appendPrimitiveNode(identifier: .printableString) { $0.append(contentsOf: Self.normalizePrintable(bytes)) }
                        } else {
                            sequence.serialize(value)
                        }
                    }
                }
            }
            guard any else { throw ASN1Error.invalidASN1Object(reason: "an empty RDN") }
        }
        self.attributes = attributes
        normalizedContent = normalized.serializedBytes
        var whole = DER.Serializer()
        whole.serialize(node)
        encoded = whole.serializedBytes
    }

    /// The values of every attribute of `type`, in order.
    public func values(of type: ASN1ObjectIdentifier) -> [String] {
        attributes.filter { $0.type == type }.compactMap(\.value)
    }

    /// Upper case, blanks collapsed to one space, leading and trailing blanks dropped.
    static func normalizePrintable(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var lastWasBlank = false
        for byte in bytes {
            if byte == 0x20 || byte == 0x09 {
                if !lastWasBlank, !out.isEmpty { out.append(0x20) }
                lastWasBlank = true
            } else {
                lastWasBlank = false
                out.append((0x61...0x7a).contains(byte) ? byte - 0x20 : byte)
            }
        }
        if out.last == 0x20 { out.removeLast() }
        return out
    }

    /// A string value: UTF8String, PrintableString, IA5String, TeletexString (as Latin-1),
    /// BMPString (UTF-16BE), UniversalString (UTF-32BE).
    static func text(_ node: ASN1Node) -> String? {
        guard case .primitive(let bytes) = node.content else { return nil }
        switch node.identifier {
        case .utf8String, .printableString, .ia5String:
            return String(validating: bytes, as: UTF8.self)
        case .teletexString:
            return String(decoding: bytes.map { UInt16($0) }, as: UTF16.self)
        case .bmpString:
            guard bytes.count % 2 == 0 else { return nil }
            let units = stride(from: bytes.startIndex, to: bytes.endIndex, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            return String(decoding: units, as: UTF16.self)
        case .universalString:
            guard bytes.count % 4 == 0 else { return nil }
            var scalars = String.UnicodeScalarView()
            for index in stride(from: bytes.startIndex, to: bytes.endIndex, by: 4) {
                let value = bytes[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(value) else { return nil }
                scalars.append(scalar)
            }
            return String(scalars)
        default:
            return nil
        }
    }
}

/// The attribute types Apple's summaries and lookups name.
public enum NameAttributeType {
    public static let commonName: ASN1ObjectIdentifier = [2, 5, 4, 3]
    public static let organizationName: ASN1ObjectIdentifier = [2, 5, 4, 10]
    public static let organizationalUnitName: ASN1ObjectIdentifier = [2, 5, 4, 11]
    public static let description: ASN1ObjectIdentifier = [2, 5, 4, 13]
    public static let emailAddress: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 1]
}
