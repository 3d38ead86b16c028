import FoundationEssentials
import KeychainModel
import KeychainProtocol
import Testing

/// The messages of every item request have codecs written by hand for speed; each must
/// write exactly WireEncoder's form and read it back, so the protocol still has one form.
@Suite struct HotPathCodecTests {
    static func expectSameForm<Message: WireCodable & Codable>(_ message: Message, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var hand = ByteWriter()
        message.encode(to: &hand)
        var generic = ByteWriter()
        WireEncoder.encode(message, to: &generic)
        #expect(hand.bytes == generic.bytes, "\(Message.self)", sourceLocation: sourceLocation)
        var fromGeneric = ByteReader(Data(generic.bytes))
        var again = ByteWriter()
        try Message(from: &fromGeneric).encode(to: &again)
        #expect(again.bytes == generic.bytes && fromGeneric.isAtEnd, sourceLocation: sourceLocation)
        var fromHand = ByteReader(Data(hand.bytes))
        var genericAgain = ByteWriter()
        WireEncoder.encode(try WireDecoder.decode(Message.self, from: &fromHand), to: &genericAgain)
        #expect(genericAgain.bytes == hand.bytes && fromHand.isAtEnd, sourceLocation: sourceLocation)
    }

    @Test func itemRequestsWriteWireEncodersForm() throws {
        let query: [String: KeychainValue] = ["class": .string("genp"), "acct": .string("a"), "v_Data": .data(Data([1, 2])), "m_Limit": .number(3)]
        try Self.expectSameForm(Service.Add(query))
        try Self.expectSameForm(Service.CopyMatching(query))
        try Self.expectSameForm(Service.Update(query, attributes: ["labl": .string("l")]))
        try Self.expectSameForm(Service.Delete([:]))
        try Self.expectSameForm(NoResult())
        let sign = EnclaveKeyOperation.sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: Data([9]))
        for (context, prompt) in [(nil, nil), (Data(count: 16), "Sign the thing")] as [(Data?, String?)] {
            try Self.expectSameForm(Service.UseEnclaveKey(blob: Data([1, 2, 3]), operation: sign, context: context, prompt: prompt))
        }
        try Self.expectSameForm(Service.EnclaveKeyOutput(SecretBytes([4, 5])))
    }

    @Test func aPresenceByteOtherThanZeroOrOneIsRefused() {
        var frame = ByteWriter()
        Service.UseEnclaveKey(blob: Data([1]), operation: .sign(algorithm: "a", data: Data()), context: nil, prompt: nil).encode(to: &frame)
        var bytes = frame.bytes
        bytes[bytes.count - 2] = 2  // the context's presence byte
        var reader = ByteReader(Data(bytes))
        #expect(throws: KeychainError.decode) { try Service.UseEnclaveKey(from: &reader) }
    }
}
