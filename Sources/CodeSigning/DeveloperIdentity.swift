public import Crypto
public import FoundationEssentials
import KeychainModel
import KeychainSystem
import SwiftASN1
public import X509

#if canImport(Glibc)
import Glibc
#endif

/// A developer identity on disk: the team's signing key and its certificate, in a
/// directory the developer keeps (`identity.key`, PKCS#8 PEM, 0600; `identity.pem`; and
/// the issuing root as `root.pem`, for reference).
public struct DeveloperIdentity: Sendable {
    public let key: P256.Signing.PrivateKey
    public let certificate: DeveloperCertificate

    public static let keyFileName = "identity.key"
    public static let certificateFileName = "identity.pem"
    public static let rootFileName = "root.pem"

    /// - Throws: `errSecParam` when the certificate is not for this key.
    public init(key: P256.Signing.PrivateKey, certificate: DeveloperCertificate) throws {
        guard P256.Signing.PublicKey(certificate.certificate.publicKey)?.rawRepresentation == key.publicKey.rawRepresentation else {
            throw KeychainError(status: OSStatusCode.param, message: "the developer certificate is not for this key")
        }
        self.key = key
        self.certificate = certificate
    }

    /// Reads an identity directory.
    ///
    /// - Throws: `errSecParam` naming the file that is missing or not what it should be.
    public init(directory: String) throws {
        let keyPath = directory + "/" + Self.keyFileName
        let certificatePath = directory + "/" + Self.certificateFileName
        guard let keyText = try? String(contentsOfFile: keyPath, encoding: .utf8),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: keyText)
        else {
            throw KeychainError(status: OSStatusCode.param, message: "\(keyPath) is not a readable P-256 private key")
        }
        guard let certificateText = try? String(contentsOfFile: certificatePath, encoding: .utf8),
            let certificate = try? DeveloperCertificate(Certificate(pemEncoded: certificateText))
        else {
            throw KeychainError(status: OSStatusCode.param, message: "\(certificatePath) is not a developer certificate")
        }
        try self.init(key: key, certificate: certificate)
    }

    /// Writes the identity into `directory` (created 0700); the key file is 0600 and
    /// never replaces an existing one.
    public func write(to directory: String, root: DeveloperRoot) throws {
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw SystemCall.ioError("cannot create \(directory)")
        }
        try Self.create(directory + "/" + Self.keyFileName, contents: key.pemRepresentation, mode: 0o600)
        try Self.replace(directory + "/" + Self.certificateFileName, contents: certificate.certificate.serializeAsPEM().pemString)
        try Self.replace(directory + "/" + Self.rootFileName, contents: root.pem)
    }

    /// Signs an executable's code (its bytes without any earlier signature).
    public func sign(code: Data, entitlements: Entitlements) throws -> CodeSignature {
        var signature = CodeSignature(
            codeHash: Data(SHA256.hash(data: code)), entitlements: entitlements,
            certificate: Data(try certificate.certificate.serializeAsDER()), signature: Data())
        signature.signature = try key.signature(for: signature.signedBytes).derRepresentation
        return signature
    }

    private static func create(_ path: String, contents: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw KeychainError(status: errno == EEXIST ? OSStatusCode.duplicateItem : OSStatusCode.io,
                                message: "cannot create \(path): \(SystemCall.describe(errno))")
        }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw SystemCall.ioError("cannot write \(path)")
        }
    }

    private static func replace(_ path: String, contents: String) throws {
        do {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw KeychainError(status: OSStatusCode.io, message: "cannot write \(path): \(error)")
        }
    }
}

extension Certificate {
    /// The certificate's DER encoding.
    public func serializeAsDER() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}
