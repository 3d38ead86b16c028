import Crypto
import FoundationEssentials
@testable import KeychainCrypto
import KeychainModel
import KeychainTestSupport
import Testing

/// The keychain's AES-256-GCM runs through libsodium where the CPU allows and through
/// swift-crypto elsewhere: the two must be one cipher, so a keychain written on one host
/// opens on another. (The known-answer vectors pin the preferred one against Python's
/// `cryptography`.)
@Suite struct AESGCMTests {
    var implementations: [AESGCM.Implementation] {
        AESGCM.sodiumAvailable ? [.sodium, .swiftCrypto] : [.swiftCrypto]
    }

    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    @Test func eachImplementationOpensWhatTheOtherSealed() throws {
        let key = SymmetricKey(size: .bits256)
        for size in [0, 1, 15, 16, 17, 31, 32, 33, 200, 1_000, 70_000] {
            let plaintext = Self.randomBytes(size)
            for associatedData in [Data(), Self.randomBytes(size % 50 + 1)] {
                for sealer in implementations {
                    let sealed = try AESGCM.seal(plaintext, using: key, authenticating: associatedData, implementation: sealer)
                    #expect(sealed.count == AESGCM.nonceByteCount + size + AESGCM.tagByteCount)
                    for opener in implementations {
                        let opened = try AESGCM.open(sealed, using: key, authenticating: associatedData, implementation: opener)
                        #expect(opened == plaintext, "sealed by \(sealer), opened by \(opener), \(size) bytes")
                    }
                }
            }
        }
    }

    @Test func aSealedBoxOpensFromASliceOfALargerBuffer() throws {
        let key = SymmetricKey(size: .bits256)
        for implementation in implementations {
            let sealed = try AESGCM.seal(Data("payload".utf8), using: key, authenticating: Data(), implementation: implementation)
            let framed = Data([0xEE]) + sealed + Data([0xFF])
            let opened = try AESGCM.open(framed.dropFirst().dropLast(), using: key, authenticating: Data(), implementation: implementation)
            #expect(opened == Data("payload".utf8))
        }
    }

    /// Every altered byte (nonce, ciphertext, tag), other associated data, another key, and
    /// every truncation are refused by both implementations. (The errors differ: swift-crypto
    /// reports BoringSSL's; the blobs' callers map any of them to errSecDecode.)
    @Test func alteredInputIsRefusedByBoth() throws {
        let key = SymmetricKey(size: .bits256)
        let associatedData = Data("row".utf8)
        let sealed = try AESGCM.seal(Data("secret value".utf8), using: key, authenticating: associatedData)
        for opener in implementations {
            for index in sealed.indices {
                var altered = sealed
                altered[index] ^= 0x01
                #expect(throws: (any Error).self) {
                    try AESGCM.open(altered, using: key, authenticating: associatedData, implementation: opener)
                }
            }
            #expect(throws: (any Error).self) {
                try AESGCM.open(sealed, using: key, authenticating: Data("other row".utf8), implementation: opener)
            }
            #expect(throws: (any Error).self) {
                try AESGCM.open(sealed, using: SymmetricKey(size: .bits256), authenticating: associatedData, implementation: opener)
            }
            for length in 0..<sealed.count {
                #expect(throws: (any Error).self) {
                    try AESGCM.open(sealed.prefix(length), using: key, authenticating: associatedData, implementation: opener)
                }
            }
        }
    }

    /// Opening into a caller's buffer (how a wrapped key is opened on the stack) gives what
    /// opening into `Data` gives, with either implementation; a buffer of another size or an
    /// altered byte is refused, and a refused open leaves no plaintext in the buffer.
    @Test func openingIntoABufferIsTheSameCipher() throws {
        let key = SymmetricKey(size: .bits256)
        let associatedData = Data("row".utf8)
        let plaintext = Self.randomBytes(32)
        for sealer in implementations {
            let sealed = try AESGCM.seal(plaintext, using: key, authenticating: associatedData, implementation: sealer)
            for opener in implementations {
                var buffer = [UInt8](repeating: 0, count: 32)
                try sealed.withUnsafeBytes { sealed in
                    try buffer.withUnsafeMutableBytes {
                        try AESGCM.open(sealed, into: $0, using: key, authenticating: associatedData, implementation: opener)
                    }
                }
                #expect(Data(buffer) == plaintext, "sealed by \(sealer), opened by \(opener)")
                for size in [31, 33] {
                    var other = [UInt8](repeating: 0, count: size)
                    #expect(throws: (any Error).self) {
                        try sealed.withUnsafeBytes { sealed in
                            try other.withUnsafeMutableBytes { try AESGCM.open(sealed, into: $0, using: key, authenticating: associatedData, implementation: opener) }
                        }
                    }
                }
                for index in [0, AESGCM.nonceByteCount, sealed.count - 1] {
                    var altered = sealed
                    altered[index] ^= 0x01
                    // Filled beforehand, so that a buffer the open never wrote and one it
                    // cleared both pass, and only one holding the plaintext fails.
                    var refused = [UInt8](repeating: 0xA5, count: 32)
                    #expect(throws: (any Error).self) {
                        try altered.withUnsafeBytes { altered in
                            try refused.withUnsafeMutableBytes { try AESGCM.open(altered, into: $0, using: key, authenticating: associatedData, implementation: opener) }
                        }
                    }
                    #expect(Data(refused) != plaintext, "a refused open left the plaintext in the buffer (\(opener))")
                }
            }
        }
    }

    @Test func eachSealTakesAFreshNonce() throws {
        let key = SymmetricKey(size: .bits256)
        for implementation in implementations {
            let nonces = try (0..<64).map { _ in
                try AESGCM.seal(Data("same".utf8), using: key, authenticating: Data(), implementation: implementation)
                    .prefix(AESGCM.nonceByteCount)
            }
            #expect(Set(nonces).count == nonces.count)
        }
    }

    /// The index's precomputed libsodium state gives swift-crypto's HMAC-SHA256, for every
    /// message length around SHA-256's block and padding boundaries.
    @Test func tokensAreHMACSHA256UnderTheIndexKey() {
        let key = SymmetricKey(size: .bits256)
        let index = BlindIndex(key: IndexKey(key: key))
        for length in 0...200 {
            let message = [UInt8](Self.randomBytes(length))
            let expected = Data(HMAC<SHA256>.authenticationCode(for: message, using: key))
            let code = index.authenticationCode(message)
            #expect(withUnsafeBytes(of: code) { Data($0) } == expected, "\(length) bytes")
        }
    }
}
