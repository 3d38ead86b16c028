import FoundationEssentials
import KeychainModel
import Testing

/// `ByteReader.utf8`, which every string on the wire and in a metadata blob goes through,
/// accepts exactly what `String(validating:as:)` accepts, and gives the same string.
@Suite struct ByteReaderUTF8Tests {
    static func read(_ bytes: [UInt8]) throws -> String? {
        var reader = ByteReader(Data(bytes))
        let string = try reader.utf8(bytes.count)
        #expect(reader.isAtEnd)
        return string
    }

    @Test(arguments: [
        [], [0x61], [0x00], Array("naïve ☃ 𝄞".utf8), [0xEF, 0xBF, 0xBD],  // valid, U+FFFD itself included
        [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],  // continuation, overlong, surrogate, > U+10FFFF
        [0xE2, 0x98], [0x61, 0xF0, 0x9F, 0x98], [0xFF], [0xFE, 0xFF],  // truncated, never UTF-8
    ] as [[UInt8]])
    func agreesWithTheStandardLibrarysValidation(_ bytes: [UInt8]) throws {
        #expect(try Self.read(bytes) == String(validating: bytes, as: UTF8.self))
    }

    @Test func agreesOnRandomBytesBiasedTowardsMultiByteSequences() throws {
        let alphabet: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0, 0x9F, 0xBD]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let count = Int(state >> 60)
            var bytes: [UInt8] = []
            for index in 0..<count { bytes.append(alphabet[Int((state >> (UInt64(index) * 4 % 56)) & 0xFF) % alphabet.count]) }
            let expected = String(validating: bytes, as: UTF8.self)
            #expect(try Self.read(bytes) == expected, "\(bytes)")
        }
    }

    @Test func aShortReadIsTruncatedDataNotAString() {
        var reader = ByteReader(Data([0x61]))
        #expect(throws: KeychainError.self) { try reader.utf8(2) }
    }
}
