import COpenSSL
import FoundationEssentials
public import KeychainModel
public import KeychainProtocol

/// PKCS#12 files, read and written by OpenSSL's libcrypto through the COpenSSL shim.
///
/// The statuses are Apple's for `SecPKCS12Import`: a password that does not open the file
/// is errSecAuthFailed, a file that is not PKCS#12 (or cannot be read) errSecDecode.
public enum PKCS12Codec {
    public static func decode(_ request: Service.DecodePKCS12) throws(KeychainError) -> Service.PKCS12Contents {
        var contents = trousseau_pkcs12_contents()
        let status = withCString(request.passphrase) { password in
            request.file.withUnsafeBytes { file in
                trousseau_pkcs12_decode(file.bindMemory(to: UInt8.self).baseAddress, file.count, password, &contents)
            }
        }
        defer { trousseau_pkcs12_contents_free(&contents) }
        switch Int(status) {
        case Int(TROUSSEAU_PKCS12_OK): break
        case Int(TROUSSEAU_PKCS12_BAD_PASSWORD): throw KeychainError(status: .authFailed)
        case Int(TROUSSEAU_PKCS12_MALFORMED): throw KeychainError(status: .decode)
        default: throw KeychainError(status: .securityInternal, message: "OpenSSL could not read the PKCS#12 file")
        }
        let key = contents.key.map { SecretBytes(copying: UnsafeRawBufferPointer(start: $0, count: contents.key_length)) }
        let certificate = contents.certificate.map { Data(bytes: $0, count: contents.certificate_length) }
        let others = (0..<contents.other_count).compactMap { index -> Data? in
            guard let bytes = contents.others[index] else { return nil }
            return Data(bytes: bytes, count: contents.other_lengths[index])
        }
        return Service.PKCS12Contents(privateKey: key, certificate: certificate, otherCertificates: others)
    }

    public static func encode(_ request: Service.EncodePKCS12) throws(KeychainError) -> Service.PKCS12File {
        var output: UnsafeMutablePointer<UInt8>?
        var outputLength = 0
        let certificates = request.certificates.map { Array($0) }
        let status = withCString(request.passphrase) { password in
            withPointers(to: certificates) { pointers, lengths in
                (request.privateKey ?? SecretBytes([])).withUnsafeBytes { key in
                    trousseau_pkcs12_encode(
                        request.privateKey == nil ? nil : key.bindMemory(to: UInt8.self).baseAddress, key.count,
                        pointers, lengths, certificates.count, password, request.name, &output, &outputLength)
                }
            }
        }
        defer { trousseau_pkcs12_free(output, outputLength) }
        switch Int(status) {
        case Int(TROUSSEAU_PKCS12_OK): break
        case Int(TROUSSEAU_PKCS12_MALFORMED): throw KeychainError(status: .param, message: "the key or a certificate to export cannot be read")
        default: throw KeychainError(status: .securityInternal, message: "OpenSSL could not write the PKCS#12 file")
        }
        guard let output else { throw KeychainError(status: .securityInternal) }
        return Service.PKCS12File(bytes: Data(bytes: output, count: outputLength))
    }

    /// A secret as a NUL-terminated C string in zeroing storage (a NUL inside ends it, as
    /// OpenSSL would read it).
    private static func withCString<R>(_ secret: SecretBytes, _ body: (UnsafePointer<CChar>) -> R) -> R {
        let terminated = SecretBytes(count: secret.count + 1) { buffer in
            secret.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        return terminated.withUnsafeBytes { body($0.bindMemory(to: CChar.self).baseAddress!) }
    }

    private static func withPointers<R>(
        to certificates: [[UInt8]], _ body: (UnsafePointer<UnsafePointer<UInt8>?>?, UnsafePointer<Int>?) -> R
    ) -> R {
        let lengths = certificates.map(\.count)
        // Copies that live for the call: each array's storage is only valid inside its closure.
        let copies = certificates.map { bytes -> UnsafeMutablePointer<UInt8> in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            copy.initialize(from: bytes, count: bytes.count)
            return copy
        }
        defer { copies.forEach { $0.deallocate() } }
        let pointers: [UnsafePointer<UInt8>?] = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { pointerBuffer in
            lengths.withUnsafeBufferPointer { body(pointerBuffer.baseAddress, $0.baseAddress) }
        }
    }
}
