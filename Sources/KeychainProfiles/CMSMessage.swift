import COpenSSL
public import FoundationEssentials
public import KeychainModel

/// CMS messages (RFC 5652) of configuration profiles, read by OpenSSL's libcrypto through
/// the COpenSSL shim: signed profiles and encrypted payloads.
public enum CMSMessage {
    /// What a signed message holds once its signature verifies over its content.
    public struct Signed: Sendable {
        public var content: Data
        /// The signer's certificate first, then every other certificate the message carries.
        public var certificates: [Data]
    }

    /// Whether `data` looks like DER (a SEQUENCE), not a property list.
    static func looksLikeDER(_ data: Data) -> Bool { data.first == 0x30 }

    /// Opens SignedData with attached content.
    ///
    /// - Throws: `errSecInvalidSignature` when a signature does not verify over the
    ///   content (the message was changed), `errSecDecode` when `data` is not SignedData
    ///   with attached content.
    public static func openSigned(_ data: Data) throws(KeychainError) -> Signed {
        var opened = trousseau_cms_signed()
        let status = data.withUnsafeBytes { bytes in
            trousseau_cms_open_signed(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &opened)
        }
        defer { trousseau_cms_signed_free(&opened) }
        switch Int(status) {
        case Int(TROUSSEAU_CMS_OK): break
        case Int(TROUSSEAU_CMS_REFUSED):
            throw KeychainError(status: .invalidSignature, message: "the profile's signature does not verify: it was changed after signing")
        case Int(TROUSSEAU_CMS_MALFORMED): throw KeychainError.decode("not a signed profile (CMS SignedData with the profile inside)")
        default: throw KeychainError(status: .securityInternal, message: "OpenSSL could not read the signed profile")
        }
        let content = opened.content.map { Data(bytes: $0, count: opened.content_length) } ?? Data()
        let certificates = (0..<opened.certificate_count).compactMap { index -> Data? in
            opened.certificates[index].map { Data(bytes: $0, count: opened.certificate_lengths[index]) }
        }
        return Signed(content: content, certificates: certificates)
    }

    /// Whether the EnvelopedData `message` has a recipient for `certificate`.
    public static func isRecipient(_ certificate: Data, of message: Data) -> Bool {
        message.withUnsafeBytes { bytes in
            certificate.withUnsafeBytes { certificateBytes in
                trousseau_cms_is_recipient(
                    bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count,
                    certificateBytes.bindMemory(to: UInt8.self).baseAddress, certificateBytes.count) == 1
            }
        }
    }

    /// Decrypts EnvelopedData for `certificate`'s recipient with its private key (PKCS#8).
    ///
    /// - Throws: `errSecDecode` when `message` is not EnvelopedData or does not open with
    ///   the key.
    public static func decrypt(_ message: Data, key: SecretBytes, certificate: Data) throws(KeychainError) -> SecretBytes {
        var output: UnsafeMutablePointer<UInt8>?
        var outputLength = 0
        let status = message.withUnsafeBytes { bytes in
            certificate.withUnsafeBytes { certificateBytes in
                key.withUnsafeBytes { keyBytes in
                    trousseau_cms_decrypt(
                        bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count,
                        keyBytes.bindMemory(to: UInt8.self).baseAddress, keyBytes.count,
                        certificateBytes.bindMemory(to: UInt8.self).baseAddress, certificateBytes.count, &output, &outputLength)
                }
            }
        }
        defer { trousseau_pkcs12_free(output, outputLength) }
        switch Int(status) {
        case Int(TROUSSEAU_CMS_OK): break
        case Int(TROUSSEAU_CMS_MALFORMED): throw KeychainError.decode("EncryptedPayloadContent is not CMS EnvelopedData")
        case Int(TROUSSEAU_CMS_REFUSED): throw KeychainError.decode("EncryptedPayloadContent does not open with the identity it names")
        default: throw KeychainError(status: .securityInternal, message: "OpenSSL could not decrypt EncryptedPayloadContent")
        }
        guard let output else { return SecretBytes([]) }
        return SecretBytes(copying: UnsafeRawBufferPointer(start: output, count: outputLength))
    }
}
