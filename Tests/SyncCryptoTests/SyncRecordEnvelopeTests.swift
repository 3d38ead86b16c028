import Crypto
import Foundation
import KeychainModel
import SyncCrypto
import SyncProtocol
import Testing

@Suite struct SyncRecordEnvelopeTests {
    let classKey = SymmetricKey(size: .bits256)
    let classKeyID = SyncIdentifier("class-a-1")!
    let device = SyncIdentifier("device-1")!
    let signing = Curve25519.Signing.PrivateKey()
    let context = SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-1")!, version: 3, type: .item)

    func seal(_ text: String = "attributes and secret", context: SyncRecordContext? = nil) throws -> SyncRecordEnvelope {
        try SyncRecordEnvelope.seal(SecretBytes(text.utf8), context: context ?? self.context, parent: (classKeyID, classKey), writer: device, signingKey: signing)
    }

    func open(_ envelope: SyncRecordEnvelope, _ context: SyncRecordContext? = nil, key: SymmetricKey? = nil) throws(SyncCryptoError) -> String {
        let opened = try envelope.open(
            context: context ?? self.context,
            parentKey: { $0 == classKeyID ? (key ?? classKey) : nil },
            writerKey: { $0 == device ? signing.publicKey : nil })
        return opened.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aSealedRecordOpensThroughItsBytesAndEachWriteHasAFreshKey() throws {
        let first = try seal()
        #expect(try open(SyncRecordEnvelope(decoding: first.encoded)) == "attributes and secret")
        let second = try seal()
        #expect(first.wrappedKey != second.wrappedKey && first.sealed != second.sealed)
        #expect(try open(seal("")) == "")
    }

    /// The server moves a body to another zone, record, version, type or tombstone flag:
    /// refused, by the signature and — for a writer who re-signs, as a removed device could —
    /// by the AEAD.
    @Test(arguments: [
        SyncRecordContext(zone: SyncIdentifier("zone-2")!, record: SyncIdentifier("record-1")!, version: 3, type: .item),
        SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-2")!, version: 3, type: .item),
        SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-1")!, version: 2, type: .item),
        SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-1")!, version: 4, type: .item),
        SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-1")!, version: 3, type: .classKey),
        SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("record-1")!, version: 3, type: .item, tombstone: true),
    ])
    func aBodyOpensOnlyWhereItWasWritten(_ elsewhere: SyncRecordContext) throws {
        let envelope = try seal()
        #expect(throws: SyncCryptoError(.badSignature, "")) { try open(envelope, elsewhere) }
        // Re-signed for the other place by a key the reader trusts: the AEAD still refuses.
        var resigned = envelope
        resigned.signature = try signing.signature(for: resignedBytes(envelope, for: elsewhere))
        #expect(throws: SyncCryptoError(.authentication, "")) { try open(resigned, elsewhere) }
    }

    /// The bytes the envelope signs, for another context (what a forger with a member's key
    /// signs), written out from the format's description: a check of the layout too.
    func resignedBytes(_ envelope: SyncRecordEnvelope, for context: SyncRecordContext) throws -> Data {
        var aad = ByteWriter("trousseau sync record 1")
        aad.appendLengthPrefixed(context.zone.rawValue)
        aad.appendLengthPrefixed(context.record.rawValue)
        aad.appendInteger(context.version)
        aad.appendInteger(UInt16(context.type.rawValue))
        aad.append(context.tombstone ? 1 : 0)
        aad.appendLengthPrefixed(envelope.parentKey.rawValue)
        aad.appendLengthPrefixed(envelope.writer.rawValue)
        var out = ByteWriter()
        out.appendLengthPrefixed(aad.data)
        out.append(envelope.wrappedKey)
        out.appendLengthPrefixed(envelope.sealed)
        return out.data
    }

    @Test func everyFlippedByteAndEveryTruncationIsRefused() throws {
        let body = try seal().encoded
        for index in body.indices {
            var flipped = body
            flipped[index] ^= 0x01
            #expect(throws: SyncCryptoError.self) { try open(SyncRecordEnvelope(decoding: flipped)) }
        }
        for cut in 0..<body.count {
            #expect(throws: SyncCryptoError(.malformed, "")) { try SyncRecordEnvelope(decoding: body.prefix(cut)) }
        }
        #expect(throws: SyncCryptoError(.malformed, "")) { try SyncRecordEnvelope(decoding: body + Data([0])) }
    }

    @Test func aWrongKeyAnUnknownKeyAndAStrangerAreEachNamed() throws {
        let envelope = try seal()
        #expect(throws: SyncCryptoError(.authentication, "")) { try open(envelope, key: SymmetricKey(size: .bits256)) }
        let stranger = try SyncRecordEnvelope.seal(SecretBytes("x".utf8), context: context, parent: (classKeyID, classKey),
                                                   writer: SyncIdentifier("device-9")!, signingKey: Curve25519.Signing.PrivateKey())
        #expect(throws: SyncCryptoError(.unknownWriter, "")) { try open(stranger) }
        let otherParent = try SyncRecordEnvelope.seal(SecretBytes("x".utf8), context: context, parent: (SyncIdentifier("class-c-1")!, classKey),
                                                      writer: device, signingKey: signing)
        #expect(throws: SyncCryptoError(.unknownKey, "")) { try open(otherParent) }
        // A member's key that is not the writer's: the signature fails.
        let impostor = try SyncRecordEnvelope.seal(SecretBytes("x".utf8), context: context, parent: (classKeyID, classKey),
                                                   writer: device, signingKey: Curve25519.Signing.PrivateKey())
        #expect(throws: SyncCryptoError(.badSignature, "")) { try open(impostor) }
    }

    @Test func lengthsHideInBuckets() throws {
        #expect([0, 1, 40, 63].map(SyncPadding.bucket(for:)) == [64, 64, 64, 64])
        #expect([64, 127, 128, 1023, 1024, 5000].map(SyncPadding.bucket(for:)) == [128, 128, 256, 1024, 2048, 5120])
        // A one-character and a forty-character password: bodies of one size.
        #expect(try seal("p").encoded.count == seal(String(repeating: "p", count: 40)).encoded.count)
        for count in [0, 1, 63, 64, 1023, 1024, 4000] {
            let padded = SyncPadding.pad(SecretBytes(repeating: 0, count: count))
            #expect(padded.count == SyncPadding.bucket(for: count))
            #expect(try SyncPadding.unpad(padded).count == count)
        }
        #expect(throws: SyncCryptoError(.malformed, "")) { try SyncPadding.unpad(SecretBytes(repeating: 0, count: 64)) }
    }
}

extension SecretBytes {
    convenience init(repeating byte: UInt8, count: Int) {
        self.init([UInt8](repeating: byte, count: count))
    }
}
