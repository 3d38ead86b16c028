import KeychainModel
import Testing

@Suite struct KeychainSearchTests {
    /// Three keychains' answers to one search, and which of them were asked.
    final class Keychains {
        let answers: [Result<KeychainValue?, KeychainError>]
        var asked: [Int] = []

        init(_ answers: [Result<KeychainValue?, KeychainError>]) { self.answers = answers }

        func search(_ limit: ItemQuery.MatchLimit) throws(KeychainError) -> KeychainValue? {
            var search = KeychainSearch(limit: limit)
            try search.run(Array(answers.indices)) { (index) throws(KeychainError) in
                asked.append(index)
                return try answers[index].get()
            }
            return try search.result()
        }
    }

    static let notFound = KeychainError(status: OSStatusCode.itemNotFound, message: "none here")
    static func items(_ names: String...) -> Result<KeychainValue?, KeychainError> { .success(.array(names.map { .string($0) })) }

    @Test func oneMatchComesFromTheFirstKeychainThatHasOne() throws {
        let keychains = Keychains([.failure(Self.notFound), .success(.string("b")), .success(.string("c"))])
        #expect(try keychains.search(.one) == .string("b"))
        #expect(keychains.asked == [0, 1])
    }

    @Test func everyMatchIsCollectedInTheKeychainsOrder() throws {
        let keychains = Keychains([Self.items("a1", "a2"), .failure(Self.notFound), Self.items("c1")])
        #expect(try keychains.search(.all) == .array([.string("a1"), .string("a2"), .string("c1")]))
        #expect(keychains.asked == [0, 1, 2])
    }

    @Test func aCountIsHeldAcrossKeychainsAndTheRestAreNotAsked() throws {
        let keychains = Keychains([Self.items("a1", "a2"), Self.items("b1", "b2"), Self.items("c1")])
        #expect(try keychains.search(.count(3)) == .array([.string("a1"), .string("a2"), .string("b1")]))
        #expect(keychains.asked == [0, 1])
    }

    @Test func noMatchAnywhereIsItemNotFound() {
        let keychains = Keychains([.failure(Self.notFound), .failure(Self.notFound)])
        #expect(throws: KeychainError.itemNotFound) { try keychains.search(.all) }
        #expect(throws: KeychainError.itemNotFound) { try Keychains([]).search(.one) }
    }

    @Test func anotherFailureEndsTheSearch() {
        let locked = KeychainError(status: OSStatusCode.interactionNotAllowed, message: "locked")
        let keychains = Keychains([.failure(locked), Self.items("b")])
        #expect(throws: locked) { try keychains.search(.all) }
        #expect(keychains.asked == [0])
    }

    @Test func aLimitIsReadAsSecurityDReadsIt() {
        #expect(KeychainSearch(query: ["m_Limit": .number(1)]).limit == .one)
        #expect(KeychainSearch(query: ["m_Limit": .number(5)]).limit == .count(5))
        #expect(KeychainSearch(query: ["m_Limit": .string("m_LimitAll")]).limit == .all)
        #expect(KeychainSearch(query: [:]).limit == .one)
        #expect(KeychainSearch(query: ["m_Limit": .number(-2)]).limit == .one)  // the first keychain refuses it
    }

    @Test func aChangeReachesEveryKeychainAndFailsOnlyWhenNoneMatched() throws {
        var changed: [Int] = []
        try KeychainSearch.changeEach([0, 1, 2]) { (index) throws(KeychainError) in
            changed.append(index)
            if index == 1 { throw Self.notFound }
        }
        #expect(changed == [0, 1, 2])
        #expect(throws: KeychainError.itemNotFound) {
            try KeychainSearch.changeEach([0, 1]) { (_: Int) throws(KeychainError) in throw Self.notFound }
        }
        let denied = KeychainError(status: OSStatusCode.wrPerm, message: "no")
        #expect(throws: denied) {
            try KeychainSearch.changeEach([0, 1]) { (index: Int) throws(KeychainError) in if index == 1 { throw denied } }
        }
    }
}
