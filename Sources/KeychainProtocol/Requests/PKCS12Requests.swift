public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Opens a PKCS#12 file (`SecPKCS12Import`, `security import`). securityd decodes it
    /// with OpenSSL, which reads every kind of file people have; clients link no C library.
    /// The caller gets back what it sent, decrypted: the file and its password were its own.
    public struct DecodePKCS12: ServiceRequest {
        public typealias Response = PKCS12Contents
        public static let opcode: UInt8 = 71
        public static let authorization = Authorization.anyCaller
        static let fileLimit = 1 << 20

        public var file: Data
        /// `kSecImportExportPassphrase`; Apple uses the empty string when none is given.
        public var passphrase: SecretBytes

        public init(file: Data, passphrase: SecretBytes) {
            self.file = file
            self.passphrase = passphrase
        }

        public init(from reader: inout ByteReader) throws {
            file = try reader.lengthPrefixed(limit: Self.fileLimit)
            passphrase = try reader.secret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(file)
            writer.appendSecret(passphrase)
        }
    }

    /// What a PKCS#12 file holds: its private key (PKCS#8 DER) and that key's certificate,
    /// when it has them, and every other certificate in the file's order.
    public struct PKCS12Contents: WireCodable {
        public var privateKey: SecretBytes?
        public var certificate: Data?
        public var otherCertificates: [Data]

        public init(privateKey: SecretBytes?, certificate: Data?, otherCertificates: [Data]) {
            self.privateKey = privateKey
            self.certificate = certificate
            self.otherCertificates = otherCertificates
        }

        public init(from reader: inout ByteReader) throws {
            privateKey = try reader.optionalSecret(limit: EvaluateTrust.certificateSize)
            certificate = try reader.byte() == 1 ? try reader.lengthPrefixed(limit: EvaluateTrust.certificateSize) : nil
            otherCertificates = try EvaluateTrust.certificates(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptionalSecret(privateKey)
            writer.appendOptional(certificate) { $1.appendLengthPrefixed($0) }
            EvaluateTrust.encode(otherCertificates, to: &writer)
        }
    }

    /// Writes a PKCS#12 file (`security export -f pkcs12`) with OpenSSL's defaults: PBES2
    /// with AES-256-CBC and PBKDF2, a SHA-256 MAC.
    public struct EncodePKCS12: ServiceRequest {
        public typealias Response = PKCS12File
        public static let opcode: UInt8 = 72
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

        public init(from reader: inout ByteReader) throws {
            privateKey = try reader.optionalSecret(limit: EvaluateTrust.certificateSize)
            certificates = try EvaluateTrust.certificates(from: &reader)
            passphrase = try reader.secret(limit: Service.passcodeLimit)
            name = try reader.byte() == 1 ? try reader.string(limit: 1024) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptionalSecret(privateKey)
            EvaluateTrust.encode(certificates, to: &writer)
            writer.appendSecret(passphrase)
            writer.appendOptional(name) { $1.appendLengthPrefixed($0) }
        }
    }

    /// A PKCS#12 file's bytes.
    public struct PKCS12File: WireCodable {
        public var bytes: Data

        public init(bytes: Data) { self.bytes = bytes }
        public init(from reader: inout ByteReader) throws { bytes = try reader.lengthPrefixed(limit: DecodePKCS12.fileLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(bytes) }
    }
}
