import FoundationEssentials
import KeychainCrypto
import KeychainModel
import Testing

/// A file keychain's header: its password opens it and nothing else does, its bytes
/// round-trip, and what is not a header of this version is refused as errSecInvalidKeychain.
@Suite struct FileKeychainHeaderTests {
    let kdf = PasscodeKDF(logN: 10, salt: Data(repeating: 7, count: 32))

    @Test func thePasswordOpensItAndNothingElse() throws {
        let (header, key) = try FileKeychainHeader.create(password: SecretBytes("right".utf8), kdf: kdf)
        let decoded = try FileKeychainHeader(decoding: header.encoded)
        #expect(decoded == header)
        let opened = try decoded.open(password: SecretBytes("right".utf8))
        #expect(opened.indexKey().secretBytes.isEqual(to: key.indexKey().secretBytes))
        #expect(throws: KeychainError(status: OSStatusCode.authFailed)) { try decoded.open(password: SecretBytes("wrong".utf8)) }

        // Rewrapped under another password with other parameters: the same key.
        let moved = try header.rewrapped(key, password: SecretBytes("new".utf8), kdf: PasscodeKDF(logN: 11, salt: Data(count: 16)))
        #expect(moved.uuid == header.uuid)
        #expect(try moved.open(password: SecretBytes("new".utf8)).indexKey().secretBytes.isEqual(to: key.indexKey().secretBytes))
        #expect(throws: KeychainError(status: OSStatusCode.authFailed)) { try moved.open(password: SecretBytes("right".utf8)) }
    }

    @Test func whatIsNotAHeaderOfThisVersionIsInvalid() throws {
        let (header, _) = try FileKeychainHeader.create(password: SecretBytes("pw".utf8), kdf: kdf)
        var newer = Array(header.encoded)
        newer[4] = FileKeychainHeader.currentVersion + 1
        #expect(throws: KeychainError(status: OSStatusCode.invalidKeychain)) { try FileKeychainHeader(decoding: Data(newer)) }
        for length in 0..<header.encoded.count {
            #expect(throws: KeychainError(status: OSStatusCode.invalidKeychain)) { try FileKeychainHeader(decoding: header.encoded.prefix(length)) }
        }
        #expect(throws: KeychainError(status: OSStatusCode.invalidKeychain)) { try FileKeychainHeader(decoding: header.encoded + Data([0])) }
        // The version is bound into the wrapping: changing it back and forth is not a way in.
        var altered = header
        altered.version = 0
        #expect(throws: KeychainError.self) { try altered.open(password: SecretBytes("pw".utf8)) }
    }

    @Test func parametersThatWouldTieUpTheEnclaveAreRefused() throws {
        let (header, _) = try FileKeychainHeader.create(password: SecretBytes("pw".utf8), kdf: kdf)
        // The last: what the fuzzer found (log N 32, r 0x0a000008), whose memory once overflowed
        // an Int and trapped — in securityd, for any file a client named.
        for (logN, blockSize, parallelism) in [
            (UInt8(24), UInt32(64), UInt32(1)), (UInt8(23), UInt32(1), UInt32(16)), (UInt8(32), UInt32(0x0a00_0008), UInt32(1)),
            (UInt8(255), UInt32.max, UInt32.max), (UInt8(20), UInt32(1 << 20), UInt32.max),
        ] {
            var heavy = header
            heavy.kdf = PasscodeKDF(logN: logN, blockSize: blockSize, parallelism: parallelism, salt: Data(count: 32))
            #expect(throws: KeychainError(status: OSStatusCode.invalidKeychain)) { try heavy.open(password: SecretBytes("pw".utf8)) }
        }
    }

    @Test func calibrationKeepsMemoryAndRaisesParallelism() throws {
        let quick = try PasscodeKDF.calibratedParallelism(target: 0, logN: 10, salt: Data(count: 32))
        #expect(quick.logN == 10 && quick.parallelism == 1)
        let slow = try PasscodeKDF.calibratedParallelism(target: 10, logN: 10, salt: Data(count: 32))
        #expect(slow.logN == 10 && slow.memoryBytes == 1 << 20, "memory stays where it was asked")
        #expect(slow.parallelism == 16, "a target no derivation reaches is capped at p = 16")
    }
}
