public import FoundationEssentials

/// An enclave key as every process outside the enclave holds it (Apple's Secure Enclave key
/// object): its public key, its protection class and access control in the clear, and its
/// private key wrapped by the enclave under a key derived from the class key, with all of
/// the above authenticated. Holding it lets a process ask the enclave to use the key —
/// under the access control, which the enclave enforces — and nothing more.
public struct EnclaveKeyBlob: Sendable, Hashable {
    static let version: UInt8 = 1
    /// The version of a key made in a TPM 2.0.
    static let tpmVersion: UInt8 = 2
    /// `kSecAttrTokenIDSecureEnclave`'s value, as the key's `tkid`.
    public static let tokenID = SecName.kSecAttrTokenIDSecureEnclave

    public var protection: ProtectionClass
    /// 16 random bytes naming the key.
    public var keyID: Data
    /// The P-256 public key, `04‖X‖Y`.
    public var publicKey: Data
    public var access: AccessControl?
    /// The private key wrapped under its class; for a key in a TPM, its authValue.
    public var wrapped: Data
    /// A key made in the enclave's TPM: the TPM's blob of it (its private part readable by
    /// that TPM alone). Nil for a key whose scalar the enclave holds.
    public var tpmKey: Data?

    public init(protection: ProtectionClass, keyID: Data, publicKey: Data, access: AccessControl?, wrapped: Data, tpmKey: Data? = nil) {
        self.protection = protection
        self.keyID = keyID
        self.publicKey = publicKey
        self.access = access
        self.wrapped = wrapped
        self.tpmKey = tpmKey
    }

    /// What the wrapping authenticates besides the access control: the key's id and public
    /// key, so that no blob can pass its private key off as another's.
    public var associatedData: Data {
        var out = Data("trousseau enclave key".utf8)
        out.append(keyID)
        out.append(publicKey)
        if let tpmKey { out.append(tpmKey) }
        return out
    }

    /// The bytes stored as the key item's data and held by `SecKey`.
    public var data: Data {
        var writer = ByteWriter()
        writer.append(tpmKey == nil ? Self.version : Self.tpmVersion)
        protection.encode(to: &writer)
        writer.appendLengthPrefixed(keyID)
        writer.appendLengthPrefixed(publicKey)
        access.encode(to: &writer)
        writer.appendLengthPrefixed(wrapped)
        if let tpmKey { writer.appendLengthPrefixed(tpmKey) }
        return Data(writer.bytes)
    }

    /// - Throws: `errSecDecode` for bytes that are not an enclave key.
    public init(data: Data) throws(KeychainError) {
        do {
            self = try Self.decode(data)
        } catch {
            throw KeychainError.decode("not an enclave key")
        }
    }

    private static func decode(_ data: Data) throws -> EnclaveKeyBlob {
        var reader = ByteReader(data)
        let version = try reader.byte()
        guard version == Self.version || version == Self.tpmVersion else { throw KeychainError.decode("not an enclave key") }
        var blob = EnclaveKeyBlob(
            protection: try ProtectionClass(from: &reader), keyID: try reader.lengthPrefixed(limit: 16),
            publicKey: try reader.lengthPrefixed(limit: 65), access: try AccessControl?(from: &reader),
            wrapped: try reader.lengthPrefixed(limit: 1024))
        if version == Self.tpmVersion { blob.tpmKey = try reader.lengthPrefixed(limit: 1024) }
        try reader.expectEnd("enclave key")
        guard blob.keyID.count == 16, blob.publicKey.count == 65, blob.publicKey.first == 4 else { throw KeychainError.decode("not an enclave key") }
        return blob
    }
}

/// What an enclave key is asked to do: the SecKey operations that need its private key,
/// with Apple's algorithm names; the enclave runs them whole.
public enum EnclaveKeyOperation: WireLeaf, Sendable, Hashable {
    /// `SecKeyCreateSignature`.
    case sign(algorithm: String, data: Data)
    /// `SecKeyCreateDecryptedData` (ECIES).
    case decrypt(algorithm: String, data: Data)
    /// `SecKeyCopyKeyExchangeResult`: with another party's public key (`04‖X‖Y`).
    case keyExchange(algorithm: String, publicKey: Data, requestedSize: Int?, sharedInfo: Data?)

    static let dataLimit = 1 << 20

    public init(from reader: inout ByteReader) throws {
        let kind = try reader.byte()
        let algorithm = try reader.string(limit: 256)
        switch kind {
        case 0: self = .sign(algorithm: algorithm, data: try reader.lengthPrefixed(limit: Self.dataLimit))
        case 1: self = .decrypt(algorithm: algorithm, data: try reader.lengthPrefixed(limit: Self.dataLimit))
        case 2:
            let publicKey = try reader.lengthPrefixed(limit: 1024)
            let size = try reader.byte() == 1 ? Int(try reader.integer(UInt32.self)) : nil
            let sharedInfo = try reader.byte() == 1 ? try reader.lengthPrefixed(limit: Self.dataLimit) : nil
            self = .keyExchange(algorithm: algorithm, publicKey: publicKey, requestedSize: size, sharedInfo: sharedInfo)
        default: throw KeychainError.decode("unknown enclave key operation")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .sign(let algorithm, let data), .decrypt(let algorithm, let data):
            if case .sign = self { writer.append(0) } else { writer.append(1) }
            writer.appendLengthPrefixed(algorithm)
            writer.appendLengthPrefixed(data)
        case .keyExchange(let algorithm, let publicKey, let size, let sharedInfo):
            writer.append(2)
            writer.appendLengthPrefixed(algorithm)
            writer.appendLengthPrefixed(publicKey)
            writer.appendOptional(size) { $1.appendInteger(UInt32(clamping: $0)) }
            writer.appendOptional(sharedInfo) { $1.appendLengthPrefixed($0) }
        }
    }
}
