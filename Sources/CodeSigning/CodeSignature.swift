public import FoundationEssentials
import KeychainModel

/// A signature appended to an executable, as Linux appends module signatures: the
/// executable's bytes, then the signature block, its length (u32, big-endian) and a magic
/// trailer. The loader ignores bytes past the ELF's segments, so a signed binary runs as
/// before; the code hash covers everything before the block.
///
/// Block: version 1, then length-prefixed code hash (SHA-256), entitlements (their signed
/// form), developer certificate (DER), and an ECDSA P-256 signature over the domain string
/// and everything before it in the block.
public struct CodeSignature: Sendable {
    public var codeHash: Data
    public var entitlements: Entitlements
    /// The developer certificate, DER.
    public var certificate: Data
    /// ECDSA P-256 / SHA-256, DER, over ``signedBytes``.
    public var signature: Data

    public static let version: UInt8 = 1
    public static let trailer = Data("~Trousseau signature appended~\n".utf8)
    static let domain = Data("trousseau-codesign-v1\0".utf8)
    /// No signature block is larger: a certificate and a few hundred groups.
    public static let maximumSize = 256 << 10

    public init(codeHash: Data, entitlements: Entitlements, certificate: Data, signature: Data) {
        self.codeHash = codeHash
        self.entitlements = entitlements
        self.certificate = certificate
        self.signature = signature
    }

    /// The bytes the signature covers: the domain string, then the block up to the signature.
    public var signedBytes: Data {
        Self.domain + unsignedBlock
    }

    private var unsignedBlock: Data {
        var out = Data([Self.version])
        out.appendLengthPrefixed(codeHash)
        out.appendLengthPrefixed(entitlements.encoded)
        out.appendLengthPrefixed(certificate)
        return out
    }

    /// The block as appended to the executable, with its length and trailer.
    public var appendix: Data {
        var block = unsignedBlock
        block.appendLengthPrefixed(signature)
        var out = block
        out.appendInteger(UInt32(block.count))
        out.append(Self.trailer)
        return out
    }

    /// Parses a signature block (without length and trailer).
    ///
    /// - Throws: `errSecDecode` for anything malformed.
    public init(block: Data) throws {
        var reader = ByteReader(block)
        guard try reader.byte() == Self.version else { throw KeychainError.decode("unknown code signature version") }
        let codeHash = try reader.lengthPrefixed(limit: 64)
        let entitlements = try Entitlements(encoded: reader.lengthPrefixed(limit: Self.maximumSize))
        let certificate = try reader.lengthPrefixed(limit: Self.maximumSize)
        let signature = try reader.lengthPrefixed(limit: 256)
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in code signature") }
        self.init(codeHash: codeHash, entitlements: entitlements, certificate: certificate, signature: signature)
    }

    /// Splits a file into its code and its signature block, if it has one.
    ///
    /// - Returns: nil when the file carries no trailer; the block may still be malformed.
    public static func split(_ file: Data) -> (code: Data, block: Data)? {
        let footer = trailer.count + 4
        guard file.count >= footer, file.suffix(trailer.count).elementsEqual(trailer) else { return nil }
        let lengthStart = file.endIndex - footer
        let length = file[lengthStart..<lengthStart + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumSize, length <= file.count - footer else { return nil }
        let blockStart = lengthStart - length
        return (file[file.startIndex..<blockStart], file[blockStart..<lengthStart])
    }
}
