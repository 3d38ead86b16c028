public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Opens a PKCS#12 file (`SecPKCS12Import`, `security import`). securityd decodes it
    /// with OpenSSL, which reads every kind of file people have; clients link no C library.
    /// The caller gets back what it sent, decrypted: the file and its password were its own.
    public struct DecodePKCS12: ServiceRequest, Codable {
        public typealias Response = PKCS12Contents
        public static let authorization = Authorization.anyCaller

        public var file: Data
        /// `kSecImportExportPassphrase`; Apple uses the empty string when none is given.
        public var passphrase: SecretBytes

        public init(file: Data, passphrase: SecretBytes) {
            self.file = file
            self.passphrase = passphrase
        }
    }

    /// What a PKCS#12 file holds: its private key (PKCS#8 DER) and that key's certificate,
    /// when it has them, and every other certificate in the file's order.
    public struct PKCS12Contents: WireCodable, Codable {
        public var privateKey: SecretBytes?
        public var certificate: Data?
        public var otherCertificates: [Data]

        public init(privateKey: SecretBytes?, certificate: Data?, otherCertificates: [Data]) {
            self.privateKey = privateKey
            self.certificate = certificate
            self.otherCertificates = otherCertificates
        }
    }

    /// Writes a PKCS#12 file (`security export -f pkcs12`) with OpenSSL's defaults: PBES2
    /// with AES-256-CBC and PBKDF2, a SHA-256 MAC.
    public struct EncodePKCS12: ServiceRequest, Codable {
        public typealias Response = PKCS12File
        public static let authorization = Authorization.anyCaller

        /// PKCS#8 DER; none for a file of certificates.
        public var privateKey: SecretBytes?
        /// The key's certificate first (when there is a key), then the others.
        public var certificates: [Data]
        public var passphrase: SecretBytes
        /// The friendly name of the key and its certificate.
        public var name: String?

        public init(privateKey: SecretBytes?, certificates: [Data], passphrase: SecretBytes, name: String?) {
            self.privateKey = privateKey
            self.certificates = certificates
            self.passphrase = passphrase
            self.name = name
        }
    }

    /// A PKCS#12 file's bytes.
    public struct PKCS12File: WireCodable, Codable {
        public var bytes: Data

        public init(bytes: Data) {
            self.bytes = bytes
        }
    }
}
