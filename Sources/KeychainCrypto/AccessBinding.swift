import Crypto
public import FoundationEssentials
public import KeychainModel
import KeychainBackupFormat

/// How an item's access control is bound into the wrapping of its item key, so that the
/// enclave — not the daemon — decides whether the secret is released.
public enum AccessBinding {
    /// The operation an authentication for the secret of the row with `associatedData` is
    /// bound to: the daemon names it in errSecAuthNeeded, the enclave checks it.
    public static func operation(associatedData: Data) -> Data {
        var input = Data("trousseau decrypt".utf8)
        input.append(associatedData)
        return Data(SHA256.hash(data: input))
    }

    /// The associated data of an access-controlled item key's wrapping: the row's, and the
    /// access control as stored. Editing either makes the wrapping fail authentication.
    public static func associatedData(_ associatedData: Data, access: AccessControl) -> Data {
        var out = associatedData
        out.append(contentsOf: Array("trousseau access control".utf8))
        out.appendLengthPrefixed(access.encoded)
        return out
    }

    /// A digest of the enrolled biometric templates, keyed so that the database does not
    /// reveal the enrollment; empty when nothing is enrolled.
    public static func enrollmentDigest(templates: [String], key: SecretBytes) -> Data {
        guard !templates.isEmpty else { return Data() }
        var message = Data("trousseau biometric enrollment".utf8)
        for template in templates.sorted() { message.appendLengthPrefixed(Data(template.utf8)) }
        return key.withUnsafeBytes { Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: $0))) }
    }

    /// A new salt for an application password: the scrypt cost (log2 N), then 32 random bytes.
    public static func passwordSalt(logN: UInt8) -> Data {
        Data([logN]) + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
    }

    /// Seals an already wrapped item key under a key derived from the application password.
    public static func seal(_ wrapped: Data, password: SecretBytes, salt: Data, associatedData: Data) throws -> Data {
        let key = try passwordKey(password, salt: salt)
        return try AESGCM.seal(wrapped, using: key, authenticating: associatedData)
    }

    /// Opens what ``seal(_:password:salt:associatedData:)`` made.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong password (or altered data).
    public static func open(_ sealed: Data, password: SecretBytes, salt: Data, associatedData: Data) throws -> Data {
        let key = try passwordKey(password, salt: salt)
        do {
            return try AESGCM.open(sealed, using: key, authenticating: associatedData)
        } catch {
            throw KeychainError(status: OSStatusCode.authFailed, message: "the application password is not correct")
        }
    }

    private static func passwordKey(_ password: SecretBytes, salt: Data) throws -> SymmetricKey {
        guard let logN = salt.first, salt.count == 33 else { throw KeychainError.decode("malformed application password salt") }
        let derived = try PasscodeKDF(logN: logN, salt: Data(salt.dropFirst())).derive(password)
        return derived.withUnsafeBytes { SymmetricKey(data: $0) }
    }
}
