import Foundation
import KeychainModel
import KeychainTestSupport
import SecretService
import Testing

/// The Secret Service's session algorithms against a real client's: python `secretstorage`
/// (Debian's python3-secretstorage) agrees a key with the service and encrypts and decrypts
/// secrets as it does against gnome-keyring; and the inputs the spec's receivers refuse.
@Suite struct SecretSessionTests {
    /// RFC 2409's 1024-bit prime (the "Second Oakley Group").
    static let prime: [UInt8] = Array(
        hex: "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")

    /// secretstorage's client side: `keypair` prints its private and public keys; `talk` takes
    /// them back with the service's public key, encrypts a secret with `format_secret` and
    /// decrypts one the service sent, as `Item.get_secret` does.
    static let client = #"""
import sys
from secretstorage.dhcrypto import Session
from secretstorage.util import format_secret
from cryptography.hazmat.backends import default_backend
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
if sys.argv[1] == "keypair":
    s = Session()
    print(hex(s.my_private_key)[2:], s.my_public_key.to_bytes(128, "big").hex())
else:
    _, private, server, iv, value = sys.argv[1:6]
    s = Session()
    s.my_private_key = int(private, 16)
    s.set_server_public_key(int(server, 16))
    s.object_path = "/org/freedesktop/secrets/session/s1"
    _, params, sent, _ = format_secret(s, b"sent by python", "text/plain")
    d = Cipher(algorithms.AES(s.aes_key), modes.CBC(bytes.fromhex(iv)), default_backend()).decryptor()
    padded = d.update(bytes.fromhex(value)) + d.finalize()
    print(params.hex(), sent.hex(), padded[:-padded[-1]].decode())
"""#

    func python(_ arguments: [String]) throws -> [String] {
        let result = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", Self.client] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    @Test func secretstorageAgreesAKeyAndSecretsTravelBothWays() throws {
        let keypair = try python(["keypair"])
        let (session, output) = try SecretSession.open(algorithm: "dh-ietf1024-sha256-aes128-cbc-pkcs7", input: Array(hex: keypair[1]))
        #expect(output.count == 128 && output.lexicographicallyPrecedes(Self.prime))

        let sent = session.encodeBytes(SecretBytes("sent by the service".utf8))
        #expect(sent.parameters.count == 16 && sent.value.count == 32)
        let replies = try python(["talk", keypair[0], output.hex, sent.parameters.hex, sent.value.hex])
        #expect(replies.count == 6 && replies[2...].joined(separator: " ") == "sent by the service", "secretstorage decrypts ours")
        let received = try session.decode(parameters: Array(hex: replies[0]), value: Array(hex: replies[1]))
        #expect(received.withUnsafeBytes { Array($0) } == Array("sent by python".utf8), "we decrypt secretstorage's")
    }

    @Test func eachSecretHasItsOwnIVAndRoundTrips() throws {
        // Any client key in range opens a session; only the service needs the key here.
        let (session, _) = try SecretSession.open(algorithm: "dh-ietf1024-sha256-aes128-cbc-pkcs7", input: [0x02, 0x03])
        for length in [0, 1, 15, 16, 17, 100] {
            let secret = SecretBytes((0..<length).map { UInt8($0) })
            let first = session.encodeBytes(secret), second = session.encodeBytes(secret)
            #expect(first.parameters != second.parameters, "a fresh IV every time")
            #expect(first.value.count == (length / 16 + 1) * 16, "PKCS#7 always pads")
            #expect(try session.decode(parameters: first.parameters, value: first.value).isEqual(to: secret))
        }
        let (plain, output) = try SecretSession.open(algorithm: "plain", input: [])
        #expect(output.isEmpty)
        #expect(plain.encodeBytes(SecretBytes("x".utf8)) == ([], Array("x".utf8)))
        #expect(try plain.decode(parameters: [], value: Array("x".utf8)).isEqual(to: SecretBytes("x".utf8)))
    }

    @Test func degenerateKeysAndMalformedSecretsAreRefused() throws {
        var minusOne = Self.prime
        minusOne[127] -= 1
        var plusOne = Self.prime  // …FFFF + 1 carries
        var index = plusOne.count - 1
        while plusOne[index] == 0xFF {
            plusOne[index] = 0
            index -= 1
        }
        plusOne[index] += 1
        for key in [[], [0], [1], [0, 0, 1], minusOne, Self.prime, plusOne, [1] + Self.prime, [UInt8](repeating: 0xFF, count: 2000)] {
            #expect(throws: SecretSession.Failure.invalidPublicKey) { try SecretSession.open(algorithm: "dh-ietf1024-sha256-aes128-cbc-pkcs7", input: key) }
        }
        #expect(throws: SecretSession.Failure.notSupported("dh-ietf1024-sha256-aes256-cbc-pkcs7")) {
            try SecretSession.open(algorithm: "dh-ietf1024-sha256-aes256-cbc-pkcs7", input: [2])
        }
        var justBelow = minusOne
        justBelow[127] -= 1
        let (session, _) = try SecretSession.open(algorithm: "dh-ietf1024-sha256-aes128-cbc-pkcs7", input: [0, 0] + justBelow)
        let good = session.encodeBytes(SecretBytes("secret".utf8))
        #expect(throws: SecretSession.Failure.invalidParameters) { try session.decode(parameters: Array(good.parameters.prefix(15)), value: good.value) }
        #expect(throws: SecretSession.Failure.invalidParameters) { try session.decode(parameters: [], value: good.value) }
        #expect(throws: SecretSession.Failure.invalidValue) { try session.decode(parameters: good.parameters, value: []) }
        #expect(throws: SecretSession.Failure.invalidValue) { try session.decode(parameters: good.parameters, value: good.value + [0]) }
        #expect(throws: SecretSession.Failure.invalidValue) { try session.decode(parameters: good.parameters, value: Array(good.value.prefix(15))) }
        // Bad padding: the last byte changed makes the padding wrong whatever it decrypts to,
        // unless it happens to decrypt to a valid one; try blocks until one is refused.
        var refused = false
        for flip in 1...255 where !refused {
            var tampered = good.value
            tampered[tampered.count - 1] ^= UInt8(flip)
            refused = (try? session.decode(parameters: good.parameters, value: tampered)) == nil
        }
        #expect(refused)
        let (plain, _) = try SecretSession.open(algorithm: "plain", input: [])
        #expect(throws: SecretSession.Failure.invalidParameters) { try plain.decode(parameters: [1], value: [1]) }
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        let digits = Array(hex.utf8)
        self = stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// The tests' view of a session: bytes in ordinary arrays, to compare and print.
extension SecretSession {
    func encodeBytes(_ secret: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        let (parameters, value) = encode(secret)
        return (parameters.withUnsafeBytes { Array($0) }, value.withUnsafeBytes { Array($0) })
    }

    func decode(parameters: [UInt8], value: [UInt8]) throws(Failure) -> SecretBytes {
        try decode(parameters: SecretBytes(parameters), value: SecretBytes(value))
    }
}
