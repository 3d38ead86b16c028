import CSodium
import Crypto
import FoundationEssentials
import KeychainModel

/// AES-256-GCM with a random 96-bit nonce, in swift-crypto's combined form
/// (`nonce(12) || ciphertext || tag(16)`): the cipher of every blob and wrapped key.
///
/// Through libsodium when the CPU has AES-NI and PCLMUL (its key schedule costs a few
/// hundred instructions, swift-crypto's BoringSSL context set-up several thousand per call,
/// most of a small blob's cost); through swift-crypto otherwise. Both are the same AES-GCM:
/// either opens what the other sealed (`AESGCMTests`, and the known-answer vectors).
enum AESGCM {
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// The cipher's two implementations (tests compare them).
    enum Implementation: Sendable {
        case sodium, swiftCrypto
    }

    /// Whether libsodium initialises and the CPU has the instructions its AES-GCM needs
    /// (without them, libsodium's AES-GCM must not be called at all).
    static let sodiumAvailable = trousseau_sodium_ready() >= 0 && crypto_aead_aes256gcm_is_available() == 1

    /// The implementation every caller uses: libsodium where it can run.
    static let preferred: Implementation = sodiumAvailable ? .sodium : .swiftCrypto

    /// Seals `plaintext` under `key` (256 bits) with a fresh random nonce.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, authenticating associatedData: Data,
        implementation: Implementation = preferred
    ) throws -> Data {
        guard implementation == .sodium, sodiumAvailable, key.bitCount == 256 else {
            guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: associatedData).combined else {
                throw KeychainError.internalComponent
            }
            return combined
        }
        var sealed = Data(count: nonceByteCount + plaintext.count + tagByteCount)
        let status = sealed.withUnsafeMutableBytes { out in
            let nonce = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            randombytes_buf(nonce, nonceByteCount)
            return key.withUnsafeBytes { key in
                associatedData.withUnsafeBytes { ad in
                    crypto_aead_aes256gcm_encrypt(
                        nonce + nonceByteCount, nil,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                        nil, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 0 else { throw KeychainError.internalComponent }
        return sealed
    }

    /// Seals `plaintext` under `key` (256 bits) with a fresh random nonce.
    static func seal(
        _ plaintext: Data, using key: SymmetricKey, authenticating associatedData: Data,
        implementation: Implementation = preferred
    ) throws -> Data {
        try plaintext.withUnsafeBytes {
            try seal($0, using: key, authenticating: associatedData, implementation: implementation)
        }
    }

    /// Opens `sealed` (combined form) under `key`.
    ///
    /// - Throws: a `CryptoKitError` when the tag does not verify (the key, the nonce, the
    ///   ciphertext or the associated data differ) or `sealed` is shorter than a nonce and a
    ///   tag; which one differs between the implementations, so callers map any to their own.
    static func open(
        _ sealed: UnsafeRawBufferPointer, using key: SymmetricKey, authenticating associatedData: Data,
        implementation: Implementation = preferred
    ) throws -> Data {
        guard implementation == .sodium, sodiumAvailable, key.bitCount == 256 else {
            let box = try AES.GCM.SealedBox(combined: Data(sealed))
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        }
        guard sealed.count >= nonceByteCount + tagByteCount else { throw CryptoKitError.incorrectParameterSize }
        var plaintext = Data(count: sealed.count - nonceByteCount - tagByteCount)
        try plaintext.withUnsafeMutableBytes { out in
            do {
                try open(sealed, into: out, using: key, authenticating: associatedData, implementation: implementation)
            } catch {
                // libsodium clears the output when the tag fails, but does not document it.
                SecretBytes.zero(out)
                throw error
            }
        }
        return plaintext
    }

    /// Opens `sealed` (combined form) under `key` into `plaintext`, which must be exactly the
    /// plaintext's size: a wrapped key is opened into the caller's (stack) buffer, with no
    /// heap copy to allocate and zero.
    ///
    /// - Throws: as ``open(_:using:authenticating:implementation:)``, and
    ///   `CryptoKitError.incorrectParameterSize` when `plaintext` is not the plaintext's size.
    static func open(
        _ sealed: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer, using key: SymmetricKey,
        authenticating associatedData: Data, implementation: Implementation = preferred
    ) throws {
        guard sealed.count >= nonceByteCount + tagByteCount, plaintext.count == sealed.count - nonceByteCount - tagByteCount else {
            throw CryptoKitError.incorrectParameterSize
        }
        guard implementation == .sodium, sodiumAvailable, key.bitCount == 256 else {
            var opened = try AES.GCM.open(AES.GCM.SealedBox(combined: Data(sealed)), using: key, authenticating: associatedData)
            defer { opened.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            opened.copyBytes(to: plaintext)
            return
        }
        let nonce = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let status = key.withUnsafeBytes { key in
            associatedData.withUnsafeBytes { ad in
                crypto_aead_aes256gcm_decrypt(
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                    nonce + nonceByteCount, UInt64(sealed.count - nonceByteCount),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw CryptoKitError.authenticationFailure }
    }

    /// Opens `sealed` (combined form) under `key`.
    static func open(
        _ sealed: some ContiguousBytes, using key: SymmetricKey, authenticating associatedData: Data,
        implementation: Implementation = preferred
    ) throws -> Data {
        try sealed.withUnsafeBytes {
            try open($0, using: key, authenticating: associatedData, implementation: implementation)
        }
    }
}
