public import FoundationEssentials
public import KeychainCertificates
public import KeychainKeys
public import KeychainModel
public import KeychainProtocol
import SwiftASN1

/// What one file to import holds — certificates and private keys, from PKCS#12 (opened by
/// securityd with OpenSSL), PEM or DER — and how it goes into the keychain. Shared by
/// `security import` and the Keychain Access window, which send the requests their own way.
public struct ImportedItems: Sendable {
    public var certificates: [CertificateFields] = []
    public var keys: [AsymmetricKey] = []

    public init() {}

    /// How many of each kind ``add(extractable:using:)`` added, as macOS's tool counts them.
    public struct Counts: Sendable, Equatable {
        public var identities = 0
        public var keys = 0
        public var certificates = 0
        /// Certificates passed over because they were there already.
        public var present = 0
    }

    /// A DER `PFX`: a SEQUENCE whose first element is INTEGER 3.
    public static func looksLikePKCS12(_ data: Data) -> Bool {
        guard let root = try? DER.parse(Array(data)), case .constructed(let nodes) = root.content,
            let version = nodes.first(where: { _ in true }), let integer = try? Int(derEncoded: version)
        else { return false }
        return integer == 3
    }

    /// The key and certificates of a PKCS#12 file securityd opened (`Service.DecodePKCS12`).
    public init(pkcs12 opened: Service.PKCS12Contents) throws(KeychainError) {
        if let key = opened.privateKey {
            let parsed = key.withUnsafeBytes { bytes in Result { () throws(KeychainError) in try AsymmetricKey(pkcs8: Data(bytes)) } }
            keys.append(try parsed.get())
        }
        for der in [opened.certificate].compactMap({ $0 }) + opened.otherCertificates {
            guard let certificate = try? CertificateFields(der: Array(der)) else { throw KeychainError(status: .decode) }
            certificates.append(certificate)
        }
    }

    /// PEM (any number of certificates and keys) or one DER certificate or key.
    ///
    /// - Throws: errSecUnknownFormat for anything else (encrypted keys, public keys, PKCS#7).
    public init(reading data: Data) throws(KeychainError) {
        if let text = String(data: data, encoding: .utf8), let begin = text.firstRange(of: "-----BEGIN") {
            guard let documents = try? PEMDocument.parseMultiple(pemString: String(text[begin.lowerBound...])), !documents.isEmpty else {
                throw KeychainError(status: .unknownFormat)
            }
            for document in documents {
                switch document.discriminator {
                case "CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE":
                    guard let certificate = try? CertificateFields(der: document.derBytes) else { throw KeychainError(status: .decode) }
                    certificates.append(certificate)
                case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
                    keys.append(try AsymmetricKey(pkcs8: Data(document.derBytes)))
                default:
                    // Encrypted keys, public keys, PKCS#7: not read (docs/ARCHITECTURE.md).
                    throw KeychainError(status: .unknownFormat)
                }
            }
            return
        }
        if let certificate = try? CertificateFields(der: Array(data)) {
            certificates.append(certificate)
        } else if let key = try? AsymmetricKey(pkcs8: data) {
            keys.append(key)
        } else {
            throw KeychainError(status: .unknownFormat)
        }
    }

    /// Adds what the file holds through `add` (a `Service.Add` sent the caller's way): each key
    /// with the certificate of its public key as an identity (the certificate may be there
    /// already; both being there is a duplicate), the other keys and certificates alone.
    /// - Parameter passingOverPresent: a certificate (not an identity's) already in the
    ///   keychain is counted as present instead of failing with errSecDuplicateItem.
    public func add(
        extractable: Bool, passingOverPresent: Bool = false, using add: (Service.Add) throws(KeychainError) -> Void
    ) throws(KeychainError) -> Counts {
        var counts = Counts()
        var paired = Set<Int>()
        for key in keys {
            var attributes = key.attributes
            attributes[SecName.kSecAttrLabel] = .string(key.keyClass == .private ? "Imported Private Key" : "Imported Public Key")
            if !extractable { attributes[SecName.kSecAttrIsExtractable] = .bool(false) }
            guard key.keyClass == .private,
                let index = certificates.firstIndex(where: { $0.publicKeyHash == key.applicationLabel })
            else {
                try add(Service.Add(attributes))
                counts.keys += 1
                continue
            }
            paired.insert(index)
            var certificateThere = false
            do {
                try add(Service.Add(certificates[index].itemAttributes))
            } catch where error == .duplicateItem {
                certificateThere = true
            }
            do {
                try add(Service.Add(attributes))
            } catch where error == .duplicateItem && !certificateThere {
                // The key was there and its certificate was not: the identity is new.
            }
            counts.identities += 1
        }
        for (index, certificate) in certificates.enumerated() where !paired.contains(index) {
            do {
                try add(Service.Add(certificate.itemAttributes))
                counts.certificates += 1
            } catch where error == .duplicateItem && passingOverPresent {
                counts.present += 1
            }
        }
        return counts
    }
}
