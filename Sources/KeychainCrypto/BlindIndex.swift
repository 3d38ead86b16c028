import CSodium
import Crypto
public import FoundationEssentials
public import KeychainModel

/// Keyed tokens (HMAC-SHA256 under the index key) that let the store find rows by
/// attribute equality without decrypting them, and enforce primary-key uniqueness.
///
/// Tokens reveal which rows share a value, never the value. Secondary tokens are
/// truncated to 64 bits; the store confirms every candidate after decrypting it.
public struct BlindIndex: Sendable {
    /// libsodium's HMAC state with the key already absorbed (its inner and outer SHA-256
    /// states): each token copies it and then costs its message's blocks only, with no
    /// allocation. swift-crypto's HMAC cost three times as much per token (it copied and
    /// finalised generic hash state through several layers).
    private let keyed: KeyedState

    public init(key: IndexKey) {
        self.keyed = KeyedState(key: key.key)
    }

    /// HMAC-SHA256 of `message` under the index key.
    func authenticationCode(_ message: [UInt8]) -> SIMD32<UInt8> {
        var state = keyed.state.pointee
        var code = SIMD32<UInt8>()
        let updated = message.withUnsafeBufferPointer { crypto_auth_hmacsha256_update(&state, $0.baseAddress, UInt64($0.count)) }
        // final zeroes the copied state (libsodium's SHA-256 final wipes its context).
        let finished = withUnsafeMutableBytes(of: &code) { crypto_auth_hmacsha256_final(&state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        // libsodium's HMAC-SHA-256 update and final return 0 always; anything else is a broken libsodium.
        precondition(updated == 0 && finished == 0, "libsodium's HMAC-SHA-256 failed")
        return code
    }

    /// The token of one attribute value, as a 64-bit column value.
    public func token(_ itemClass: ItemClass, attribute: String, value: KeychainValue) -> Int64 {
        var message = ByteWriter("trousseau token")
        message.appendLengthPrefixed(itemClass.rawValue)
        message.appendLengthPrefixed(attribute)
        value.encode(to: &message)
        let code = authenticationCode(message.bytes)
        return Int64(bitPattern: (0..<8).reduce(UInt64(0)) { ($0 << 8) | UInt64(code[$1]) })
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
        let code = authenticationCode(message.bytes)
        return withUnsafeBytes(of: code) { Data($0) }
    }
}

/// The keyed HMAC state, zeroed when the last index holding it is dropped.
private final class KeyedState: Sendable {
    nonisolated(unsafe) let state: UnsafeMutablePointer<crypto_auth_hmacsha256_state>

    init(key: SymmetricKey) {
        state = .allocate(capacity: 1)
        key.withUnsafeBytes { key in
            _ = crypto_auth_hmacsha256_init(state, key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
        }
    }

    deinit {
        sodium_memzero(state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        state.deallocate()
    }
}
