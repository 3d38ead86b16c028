import FoundationEssentials
import KeychainModel
import Testing

@Suite struct ServiceWireTests {
    let query: [String: KeychainValue] = [
        "class": .string("genp"), "acct": .string("ålice"), "v_Data": .data(Data([0, 255])), "port": .number(-1),
        "cdat": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "sync": .bool(true),
        "list": .array([.string("a"), .dictionary(["k": .number(1)])]),
    ]

    @Test func requestsAndResponsesRoundTrip() throws {
        let requests: [ServiceRequest] = [
            .add(query), .copyMatching(query), .update(query, attributes: ["labl": .string("x")]), .delete(query),
            .keychainStatus, .unlock(passcode: SecretBytes("1234".utf8)), .lock,
            .changePasscode(old: nil, new: SecretBytes("n".utf8)), .updateSettings(autoLockSeconds: 60),
            .issueDeveloperCertificate(team: "AAAAAAAAAA", applicationGroups: ["group.a"], publicKey: Data(repeating: 7, count: 64)),
            .withUserPresence(passcode: SecretBytes("1234".utf8), .delete(query)),
        ]
        for request in requests {
            let encoded = ServiceWire.encode(request)
            #expect(ServiceWire.encode(try ServiceWire.decodeRequest(encoded)) == encoded)
        }
        let response = ServiceResponse(status: -25300, message: "not found", result: .array([.dictionary(query)]))
        let decoded = try ServiceWire.decodeResponse(ServiceWire.encode(response))
        #expect(decoded.status == -25300 && decoded.message == "not found" && decoded.result == response.result)
    }

    @Test func everyTruncationIsRefused() {
        let encoded = ServiceWire.encode(.update(query, attributes: ["labl": .string("x")]))
        for length in 0..<encoded.count {
            #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(encoded.prefix(length)) }
        }
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(encoded + Data([0])) }
        let presence = ServiceWire.encode(.withUserPresence(passcode: SecretBytes("1234".utf8), .copyMatching(query)))
        for length in 0..<presence.count {
            #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(presence.prefix(length)) }
        }
    }

    /// User presence wraps one request: a wrapper inside a wrapper is refused.
    @Test func userPresenceIsOneLevelDeep() {
        let inner = ServiceRequest.withUserPresence(passcode: SecretBytes("1".utf8), .lock)
        let nested = ServiceWire.encode(.withUserPresence(passcode: SecretBytes("2".utf8), inner))
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(nested) }
    }

    @Test func hostileValuesAreRefused() {
        // Nesting past the limit.
        var deep = KeychainValue.string("x")
        for _ in 0..<20 { deep = .array([deep]) }
        var out = Data([ServiceWire.version, 1])
        KeychainValue.dictionary(["k": deep]).encode(to: &out)
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(out) }
        // A count far beyond the bytes that follow.
        var lying = Data([ServiceWire.version, 1, 7])
        lying.appendInteger(UInt32.max)
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(lying) }
        // A query that is not a dictionary, and invalid UTF-8.
        var notDictionary = Data([ServiceWire.version, 2])
        KeychainValue.string("genp").encode(to: &notDictionary)
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(notDictionary) }
        var badString = Data([ServiceWire.version, 2, 1])
        badString.appendLengthPrefixed(Data([0xFF, 0xFE]))
        #expect(throws: KeychainError.decode) { try ServiceWire.decodeRequest(badString) }
    }
}
