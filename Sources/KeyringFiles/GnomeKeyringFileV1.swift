import CGVariant
import Crypto
import CryptoExtras
import FoundationEssentials
import KeychainModel

/// Version 1 keyring files: libsecret's file backend (what libsecret writes inside Flatpak,
/// and oo7), `libsecret/secret-file-collection.c`. The body is a GVariant
/// `(uayutua(a{say}ay))` — salt, PBKDF2-SHA256 iterations, dates, and per item its hashed
/// attributes and a blob: AES-128-CBC ciphertext, its IV, and an HMAC-SHA256 of both, all under
/// the one 16-byte key PBKDF2 derives from the password; the plaintext (PKCS#7-padded) is the
/// GVariant `(a{ss}sttay)` of attributes, label, created, modified and secret.
enum GnomeKeyringFileV1 {
    static func read(_ body: ArraySlice<UInt8>, password: SecretBytes, iterationLimit: UInt32) throws -> GnomeKeyringFile {
        final class Collected {
            var blobs: [[UInt8]] = []
        }
        let collected = Collected()
        var salt = [UInt8](repeating: 0, count: 1024)
        var saltLength = 0
        var iterations: UInt32 = 0
        var modified: UInt64 = 0
        let body = Array(body)
        let read = body.withUnsafeBufferPointer { buffer in
            salt.withUnsafeMutableBufferPointer { saltBuffer in
                trousseau_keyring1_read(
                    buffer.baseAddress, buffer.count, saltBuffer.baseAddress, saltBuffer.count, &saltLength, &iterations, &modified,
                    { blob, length, context in
                        let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
                        collected.blobs.append(length > 0 ? Array(UnsafeBufferPointer(start: blob, count: length)) : [])
                    }, Unmanaged.passUnretained(collected).toOpaque())
            }
        }
        try Self.check(read, "not a version 1 keyring")
        guard iterations >= 1, iterations <= iterationLimit else {
            throw KeychainError.decode("the keyring file is damaged (\(iterations) PBKDF2 iterations)")
        }
        let key = try password.withUnsafeBytes { passwordBytes in
            try KDF.Insecure.PBKDF2.deriveKey(
                from: passwordBytes, salt: salt[0..<saltLength], using: .sha256, outputByteCount: 16, unsafeUncheckedRounds: Int(iterations))
        }
        var items: [GnomeKeyringFile.Item] = []
        for blob in collected.blobs {
            items.append(try item(blob, key: key))
        }
        let date = Date(timeIntervalSince1970: TimeInterval(modified))
        return GnomeKeyringFile(label: "", created: date, modified: date, items: items)
    }

    /// The shim's answer: 0, -1 for data that is not what it should be, -2 without GLib.
    private static func check(_ result: Int32, _ what: String) throws {
        switch result {
        case 0: return
        case -2: throw KeychainError(status: OSStatusCode.unimplemented, message: "reading libsecret's keyring files needs GLib (Debian's libglib2.0-0)")
        default: throw KeychainError.decode("the keyring file is damaged (\(what))")
        }
    }

    /// One item's blob: its MAC checked (a wrong password fails here), then decrypted.
    private static func item(_ blob: [UInt8], key: SymmetricKey) throws -> GnomeKeyringFile.Item {
        guard blob.count >= 16 + 32, (blob.count - 48) % 16 == 0, blob.count > 48 else {
            throw KeychainError.decode("the keyring file is damaged (an item's blob)")
        }
        let authenticated = blob[0..<(blob.count - 32)]
        guard HMAC<SHA256>.isValidAuthenticationCode(blob[(blob.count - 32)...], authenticating: authenticated, using: key) else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "the password of the keyring is not this one")
        }
        let ciphertext = blob[0..<(blob.count - 48)]
        let iv = try AES._CBC.IV(ivBytes: blob[(blob.count - 48)..<(blob.count - 32)])
        var output = try AES._CBC.decrypt(ciphertext, using: key, iv: iv, noPadding: true)
        var padded = Array(output)
        output.withUnsafeMutableBytes { SecretBytes.zero($0) }
        defer { padded.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard let last = padded.last, (1...16).contains(last), Int(last) <= padded.count else {
            throw KeychainError.decode("the keyring file is damaged (an item's padding)")
        }
        let plaintext = padded[0..<(padded.count - Int(last))]

        final class Fields {
            var attributes: [String: String] = [:]
            var label = ""
            var secret = SecretBytes([])
        }
        let fields = Fields()
        var created: UInt64 = 0
        var modified: UInt64 = 0
        let plaintextCount = plaintext.count
        let read = padded.withUnsafeBufferPointer { whole in
            let buffer = UnsafeBufferPointer(rebasing: whole[0..<plaintextCount])
            return trousseau_keyring1_item(
                buffer.baseAddress, buffer.count,
                { name, value, context in
                    let fields = Unmanaged<Fields>.fromOpaque(context!).takeUnretainedValue()
                    let text = value.map { String(cString: $0) } ?? ""
                    if let name { fields.attributes[String(cString: name)] = text } else { fields.label = text }
                }, &created, &modified,
                { bytes, length, context in
                    let fields = Unmanaged<Fields>.fromOpaque(context!).takeUnretainedValue()
                    fields.secret = length > 0 ? SecretBytes(copying: UnsafeRawBufferPointer(start: bytes, count: length)) : SecretBytes([])
                }, Unmanaged.passUnretained(fields).toOpaque())
        }
        try Self.check(read, "an item")
        return GnomeKeyringFile.Item(
            label: fields.label, attributes: fields.attributes, secret: fields.secret,
            created: Date(timeIntervalSince1970: TimeInterval(created)), modified: Date(timeIntervalSince1970: TimeInterval(modified)))
    }
}
