import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainTestSupport
import Testing

@Suite struct CodecTests {
    let sample: [String: KeychainValue] = [
        "acct": .string("alice ✓"), "gena": .data(Data([0, 1, 2, 255])), "port": .number(-443),
        "cdat": .date(Date(timeIntervalSinceReferenceDate: 812_345_678.25)), "invi": .bool(true),
        "labl": .string(""), "alis": .data(Data()),
    ]

    @Test func roundTrip() throws {
        #expect(try AttributeCodec.decode(AttributeCodec.encode(sample)) == sample)
        #expect(try AttributeCodec.decode(AttributeCodec.encode([:])) == [:])
    }

    @Test func encodingIsDeterministic() {
        #expect(AttributeCodec.encode(sample) == AttributeCodec.encode(sample.merging([:]) { $1 }))
    }

    /// The exact bytes, spelled out: names in byte order whatever the dictionary's own
    /// order, each followed by its value (tag, then length and bytes). The blobs of every
    /// keychain already written depend on it, as does a dictionary's form on the wire.
    @Test func attributesAreWrittenInNameOrder() {
        let attributes: [String: KeychainValue] = ["svce": .string("s"), "acct": .string("ab"), "invi": .bool(true)]
        // Each name's bytes, then its value's (tag 1 a string with its 32-bit length, 5 a bool).
        let acct: [UInt8] = Array("acct".utf8) + [1, 0, 0, 0, 2] + Array("ab".utf8)
        let invi: [UInt8] = Array("invi".utf8) + [5, 1]
        let svce: [UInt8] = Array("svce".utf8) + [1, 0, 0, 0, 1] + Array("s".utf8)
        let blob: [UInt8] = [1, 0, 3] + [4] + acct + [4] + invi + [4] + svce
        #expect(Array(AttributeCodec.encode(attributes)) == blob)
        var wire = ByteWriter()
        KeychainValue.dictionary(attributes).encode(to: &wire)
        let length: [UInt8] = [0, 0, 0, 4]
        let form: [UInt8] = [7, 0, 0, 0, 3] + length + acct + length + invi + length + svce
        #expect(wire.bytes == form)
    }

    /// Decoded attributes have room for what `attributeDictionary` adds to them, and that is at most
    /// `columnAttributeCount` keys: `attributeDictionary`'s copy never grows.
    @Test func decodedAttributesHaveRoomForAResultsColumns() throws {
        // Ten: room for ten alone (twelve) is too little for fifteen.
        let ten = Dictionary(uniqueKeysWithValues: (0..<10).map { ("at\($0)", KeychainValue.number(Int64($0))) })
        let decoded = try AttributeCodec.decode(AttributeCodec.encode(ten))
        #expect(decoded.count == 10 && decoded.capacity >= decoded.count + KeychainItem.columnAttributeCount, "\(decoded.capacity)")
        let item = KeychainItem(
            itemClass: .genericPassword, attributes: decoded, accessGroup: "g", protection: .whenUnlocked,
            synchronizable: true, tombstone: true,
            persistentReference: PersistentReference(itemClass: .genericPassword, uuid: UUID()), data: nil)
        #expect(item.attributeDictionary.count == decoded.count + KeychainItem.columnAttributeCount)
    }

    /// Every truncation of a valid encoding, and every single-byte corruption of its
    /// header, is refused with errSecDecode — never a crash.
    @Test func truncatedAndCorruptInputIsRefused() throws {
        let encoded = AttributeCodec.encode(sample)
        for length in 0..<encoded.count {
            #expect(throws: KeychainError.decode) { try AttributeCodec.decode(encoded.prefix(length)) }
        }
        #expect(throws: KeychainError.decode) { try AttributeCodec.decode(encoded + Data([0])) }
        for position in 0..<encoded.count {
            var corrupt = encoded
            corrupt[position] ^= 0xFF
            // Some flips still decode (inside a value); none may crash.
            _ = try? AttributeCodec.decode(corrupt)
        }
    }

    /// Seeded, so that a failure names inputs that can be replayed.
    @Test(arguments: [UInt64(1), 2, 3, 0x5EED])
    func randomInputNeverCrashes(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let length = Int.random(in: 0..<64, using: &generator)
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            _ = try? AttributeCodec.decode(Data([1]) + bytes)
        }
    }

    @Test func tokensSeparateClassesAttributesAndTypes() {
        let index = BlindIndex(key: ClassKey.generate().indexKey())
        let base = index.token(.genericPassword, attribute: "acct", value: .string("x"))
        #expect(base == index.token(.genericPassword, attribute: "acct", value: .string("x")))
        #expect(base != index.token(.internetPassword, attribute: "acct", value: .string("x")))
        #expect(base != index.token(.genericPassword, attribute: "svce", value: .string("x")))
        #expect(base != index.token(.genericPassword, attribute: "acct", value: .data(Data("x".utf8))))
        let otherKey = BlindIndex(key: ClassKey.generate().indexKey())
        #expect(base != otherKey.token(.genericPassword, attribute: "acct", value: .string("x")))
    }

    @Test func secretBlobRoundTripAndTamper() throws {
        let classKey = ClassKey.generate()
        let identity = RowIdentity(
            itemClass: .key, uuid: UUID(), accessGroup: "g", protection: .always,
            synchronizable: true, tombstone: false, primaryKeyToken: Data(repeating: 9, count: 32))
        let wrap = { (key: ItemKey, ad: Data, access: AccessControl?) in (try classKey.wrap(key, associatedData: ad), access) }
        let unwrap = { (wrapped: Data, ad: Data, _: AccessControl?) in try classKey.unwrap(wrapped, associatedData: ad) }

        let blob = try SecretBlob.seal(SecretBytes("s3cret".utf8), identity: identity, wrapKey: wrap)
        #expect(try SecretBlob.open(blob, identity: identity, unwrapKey: unwrap)?.isEqual(to: SecretBytes("s3cret".utf8)) == true)
        #expect(try SecretBlob.open(SecretBlob.seal(nil, identity: identity, wrapKey: wrap), identity: identity, unwrapKey: unwrap) == nil)
        #expect(try SecretBlob.open(SecretBlob.seal(SecretBytes([]), identity: identity, wrapKey: wrap), identity: identity, unwrapKey: unwrap)?.count == 0)

        for position in [0, 1, 5, blob.count / 2, blob.count - 1] {
            var flipped = blob
            flipped[position] ^= 0x01
            #expect(throws: KeychainError.decode) { try SecretBlob.open(flipped, identity: identity, unwrapKey: unwrap) }
        }
        for length in [0, 1, 3, 40, blob.count - 1] {
            #expect(throws: KeychainError.decode) { try SecretBlob.open(blob.prefix(length), identity: identity, unwrapKey: unwrap) }
        }
        var tombstoned = identity
        tombstoned.tombstone = true
        #expect(throws: KeychainError.decode) { try SecretBlob.open(blob, identity: tombstoned, unwrapKey: unwrap) }
    }

    /// One part's associated data made from the other's is the one built for that part,
    /// whatever the fields' lengths (the part's byte sits after a fixed prefix), and it
    /// is not the other part's: a blob cannot be moved between the row's columns.
    @Test func onePartsAssociatedDataMadeFromTheOthersIsItsOwn() {
        let identities = [
            RowIdentity(
                itemClass: .genericPassword, uuid: UUID(), accessGroup: "", protection: .whenUnlocked,
                synchronizable: false, tombstone: false, primaryKeyToken: Data()),
            RowIdentity(
                itemClass: .key, uuid: UUID(), accessGroup: String(repeating: "g", count: 300), protection: .always,
                synchronizable: true, tombstone: true, primaryKeyToken: Data(repeating: 9, count: 32)),
        ]
        for identity in identities {
            let metadata = identity.associatedData(for: .metadata)
            let secret = identity.associatedData(for: .secret)
            #expect(metadata != secret)
            #expect(RowIdentity.associatedData(metadata, as: .secret) == secret)
            #expect(RowIdentity.associatedData(secret, as: .metadata) == metadata)
            // From a slice that does not start at 0, as Data read out of a larger buffer may.
            let slice = (Data([0xFF]) + metadata).dropFirst()
            #expect(RowIdentity.associatedData(slice, as: .secret) == secret)
        }
    }

    @Test func secretBytesNeverPrintThemselves() {
        let secret = SecretBytes("do-not-print".utf8)
        #expect(!"\(secret)".contains("do-not-print"))
        #expect(!String(reflecting: secret).contains("do-not-print"))
        #expect(secret.isEqual(to: SecretBytes("do-not-print".utf8)))
        #expect(!secret.isEqual(to: SecretBytes("do-not-prinT".utf8)))
    }
}
