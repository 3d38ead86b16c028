import Crypto
public import FoundationEssentials
public import KeychainModel

/// Keyed tokens (HMAC-SHA256 under the index key) that let the store find rows by
/// attribute equality without decrypting them, and enforce primary-key uniqueness.
///
/// Tokens reveal which rows share a value, never the value. Secondary tokens are
/// truncated to 64 bits; the store confirms every candidate after decrypting it.
public struct BlindIndex: Sendable {
    /// HMAC with the key already absorbed: each token then costs its message's blocks only,
    /// not the two key blocks again.
    private let keyed: HMAC<SHA256>

    public init(key: IndexKey) {
        self.keyed = HMAC(key: key.key)
    }

    private func authenticationCode(_ message: ByteWriter) -> HashedAuthenticationCode<SHA256> {
        var mac = keyed
        mac.update(data: message.bytes)
        return mac.finalize()
    }

    /// The token of one attribute value, as a 64-bit column value.
    public func token(_ itemClass: ItemClass, attribute: String, value: KeychainValue) -> Int64 {
        var message = ByteWriter("trousseau token")
        message.appendLengthPrefixed(itemClass.rawValue)
        message.appendLengthPrefixed(attribute)
        value.encode(to: &message)
        return authenticationCode(message).withUnsafeBytes { bytes in
            Int64(bitPattern: bytes.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) })
        }
    }

    /// The full 256-bit token of a primary key: `values` in the schema's primary-key
    /// order, each the attribute's value or its default.
    public func primaryKeyToken(_ itemClass: ItemClass, values: [(name: String, value: KeychainValue)]) -> Data {
        var message = ByteWriter("trousseau primary key")
        message.appendLengthPrefixed(itemClass.rawValue)
        for (name, value) in values {
            message.appendLengthPrefixed(name)
            value.encode(to: &message)
        }
        return Data(authenticationCode(message))
    }
}
