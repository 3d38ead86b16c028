import FoundationEssentials
import KeychainModel
import Testing

/// ``WireEncoder`` and ``WireDecoder``: the one codec of both protocols' messages.
@Suite struct WireCoderTests {
    struct Sample: WireCodable, Codable, Equatable {
        enum Kind: UInt8, Codable { case a = 1, b = 2 }

        var number: UInt16
        var name: String?
        var flags: [Bool]
        var blob: Data
        var date: Date
        var kind: Kind
        var protection: ProtectionClass
        var query: [String: KeychainValue]
        var nested: Inner?

        struct Inner: Codable, Equatable {
            var value: Int32
        }
    }

    static let sample = Sample(
        number: 0x0102, name: "é", flags: [true, false], blob: Data([9]), date: Date(timeIntervalSinceReferenceDate: 1.5), kind: .b,
        protection: .always, query: ["k": .number(1)], nested: .init(value: -2))

    static func bytes(_ value: some WireCodable) -> [UInt8] {
        var writer = ByteWriter()
        value.encode(to: &writer)
        return writer.bytes
    }

    static func decode<Value: WireCodable>(_ bytes: [UInt8], as _: Value.Type = Value.self) throws -> Value {
        var reader = ByteReader(Data(bytes))
        let value = try Value(from: &reader)
        try reader.expectEnd("value")
        return value
    }

    @Test func theFormIsFieldsInOrderWithoutNames() throws {
        var query = ByteWriter()
        KeychainValue.dictionary(["k": .number(1)]).encode(to: &query)
        let expected: [UInt8] =
            [0x01, 0x02]  // number
            + [1, 0, 0, 0, 2, 0xC3, 0xA9]  // name: present, length, UTF-8
            + [0, 0, 0, 2, 1, 0]  // flags: count, elements
            + [0, 0, 0, 1, 9]  // blob
            + [0x3F, 0xF8, 0, 0, 0, 0, 0, 0]  // date: 1.5 as a Double
            + [2]  // kind's raw value
            + [0, 0, 0, 2] + Array(ProtectionClass.always.rawValue.utf8)  // protection class, by its own codec
            + query.bytes  // the dictionary as a KeychainValue
            + [1, 0xFF, 0xFF, 0xFF, 0xFE]  // nested: present, value
        #expect(Self.bytes(Self.sample) == expected)
        #expect(try Self.decode(expected) == Self.sample)
        var absent = Self.sample
        absent.name = nil
        absent.nested = nil
        #expect(try Self.decode(Self.bytes(absent)) == absent)
    }

    @Test func secretsRoundTripIntoZeroingStorage() throws {
        struct Carrier: WireCodable, Codable {
            var secret: SecretBytes
            var maybe: SecretBytes?
        }
        let carried = try Self.decode(Self.bytes(Carrier(secret: SecretBytes([1, 2, 3]), maybe: nil)), as: Carrier.self)
        #expect(carried.secret.isEqual(to: SecretBytes([1, 2, 3])) && carried.maybe == nil)
    }

    @Test func everyTruncationIsRefused() {
        let full = Self.bytes(Self.sample)
        for length in 0..<full.count {
            #expect(throws: KeychainError.decode) { try Self.decode(Array(full.prefix(length)), as: Sample.self) }
        }
    }

    @Test func hostileFieldsAreRefusedAsDecodeErrors() {
        var full = Self.bytes(Self.sample)
        full[2] = 2  // a presence byte that is neither 0 nor 1
        #expect(throws: KeychainError.decode) { try Self.decode(full, as: Sample.self) }

        full = Self.bytes(Self.sample)
        full[28] = 7  // a raw value no case has
        #expect(throws: KeychainError.decode) { try Self.decode(full, as: Sample.self) }

        full = Self.bytes(Self.sample)
        full.replaceSubrange(20..<28, with: [0x7F, 0xF0, 0, 0, 0, 0, 0, 0])  // an infinite date
        #expect(throws: KeychainError.decode) { try Self.decode(full, as: Sample.self) }

        full = Self.bytes(Self.sample)
        full[13] = 2  // a boolean that is neither 0 nor 1
        #expect(throws: KeychainError.decode) { try Self.decode(full, as: Sample.self) }
    }

    @Test func aCountBeyondTheBytesLeftIsRefusedBeforeAnyLoop() {
        struct Many: WireCodable, Codable { var empties: [NoResult] }
        // Four billion elements of nothing would loop four billion times.
        #expect(throws: KeychainError.decode) { try Self.decode([0xFF, 0xFF, 0xFF, 0xFF], as: Many.self) }
        #expect(throws: KeychainError.decode) { try Self.decode([0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3], as: Many.self) }
    }

    @Test func aTypeWithNoWireFormFailsLoudly() {
        struct Keyed: WireCodable, Codable { var table: [String: Int] }
        enum Choice: Codable { case one(Int), two }
        struct WithEnum: WireCodable, Codable { var choice: Choice }
        for bytes in [Self.bytes(Keyed(table: ["a": 1])), [0, 0, 0, 0]] {
            #expect(throws: KeychainError(status: OSStatusCode.internalComponent)) { try Self.decode(bytes, as: Keyed.self) }
        }
        #expect(throws: KeychainError(status: OSStatusCode.internalComponent)) { try Self.decode([0, 0, 0, 0], as: WithEnum.self) }
    }

    @Test func aLeafHasNoSecondFormat() {
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(KeychainValue.string("x")) }
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(SecretBytes([1])) }
    }
}
