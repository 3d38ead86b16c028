import FoundationEssentials
import KeychainCrypto
import KeychainModel
import Testing

/// Vectors from `Vectors/make_vectors.py`, computed with Python's `cryptography` package,
/// so the formats are pinned by an implementation other than ours.
@Suite struct KnownAnswerTests {
    let classKey = try! ClassKey(bytes: SecretBytes(0..<32))  // 32 bytes: cannot fail
    let expectedPrimaryKeyToken = Data(hex: "fe99efaa6aca3220828102a1ca5cff33aafc8e891ce0ce07fb35d0518f567314")

    var identity: RowIdentity {
        RowIdentity(
            itemClass: .genericPassword,
            uuid: UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
            accessGroup: "team.app", protection: .whenUnlocked, synchronizable: false, tombstone: false,
            primaryKeyToken: expectedPrimaryKeyToken)
    }

    @Test func tokens() {
        let index = BlindIndex(key: classKey.indexKey())
        #expect(index.token(.genericPassword, attribute: "acct", value: .string("alice")) == -3434235715797604003)
        let pk = index.primaryKeyToken(.genericPassword, values: [
            ("acct", .string("alice")), ("svce", .string("mail")), ("agrp", .string("team.app")), ("sync", .bool(false)),
        ])
        #expect(pk == expectedPrimaryKeyToken)
    }

    @Test func metadataBlob() throws {
        let blob = Data(hex: "01a0a0a0a0a0a0a0a0a0a0a0a0a6263ceb1ead99a85d111f81e45f0837b289e8220dd95cb56e6827b8982a7182148847d4f8b5e0bc3b59cd1253a212d3")
        let attributes = try MetadataBlob.open(blob, key: classKey.metadataKey(), identity: identity)
        #expect(attributes == ["acct": .string("alice"), "svce": .string("mail")])
    }

    @Test func secretBlob() throws {
        let blob = Data(hex: "01003cb0b0b0b0b0b0b0b0b0b0b0b0b8f0be08dc88dce847d88de99ff528cd22c00673e3c682c711eadb736e0f4c8306736a30cf1e92d43b92b6401e59bcddc0c0c0c0c0c0c0c0c0c0c0c054c23cb439210c1bd6a1ecb415b66e8822ffe94727f43c6d")
        let secret = try SecretBlob.open(blob, identity: identity) { wrapped, associatedData, _ in
            try classKey.unwrap(wrapped, associatedData: associatedData)
        }
        #expect(secret?.isEqual(to: SecretBytes("hunter2".utf8)) == true)
    }

    @Test func blobsAreBoundToTheirRow() throws {
        let blob = Data(hex: "01a0a0a0a0a0a0a0a0a0a0a0a0a6263ceb1ead99a85d111f81e45f0837b289e8220dd95cb56e6827b8982a7182148847d4f8b5e0bc3b59cd1253a212d3")
        var moved = identity
        moved.accessGroup = "team.other"
        #expect(throws: KeychainError.decode) {
            try MetadataBlob.open(blob, key: classKey.metadataKey(), identity: moved)
        }
        #expect(throws: KeychainError.decode) {
            try MetadataBlob.open(blob, key: ClassKey.generate().metadataKey(), identity: identity)
        }
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)  // test vectors are valid hex
            index = next
        }
        self.init(bytes)
    }
}
