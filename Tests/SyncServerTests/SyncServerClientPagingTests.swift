import Foundation
import KeychainModel
import KeychainSync
import SyncProtocol
import SyncTransport
import Testing

/// A device reads the membership chain page by page (issue 61): it follows `more` to the
/// chain's end, takes a server that answers with the whole chain at once (no `more`), and
/// refuses a server whose pages never end instead of asking for ever.
@Suite struct SyncServerClientPagingTests {
    /// A server's `GET /v1/membership` as the test plays it: each request's `after` and
    /// `limit`, and the answer's body.
    struct Chain: SyncHTTPExchange {
        let answer: @Sendable (_ after: Int64, _ limit: Int) -> Data
        let asked = BlockingMutex([(after: Int64, limit: Int)]())

        func exchange(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            let query = URLComponents(string: request.url)?.queryItems ?? []
            let after = query.first { $0.name == "after" }?.value.flatMap { Int64($0) } ?? -1
            let limit = query.first { $0.name == "limit" }?.value.flatMap { Int($0) } ?? Int.max
            asked.withLock { $0.append((after, limit)) }
            return SyncHTTPResponse(status: 200, body: answer(after, limit))
        }
    }

    static let entries = (0..<150).map { MembershipEntry(index: Int64($0), entry: Data("entry \($0)".utf8)) }

    func client(_ exchange: Chain) throws -> SyncServerClient {
        try SyncServerClient(server: "http://127.0.0.1:1", credential: SecretBytes([UInt8](repeating: 7, count: 32)), http: exchange)
    }

    @Test func theChainIsReadToItsEndInPages() async throws {
        let server = Chain { after, limit in
            let rest = Self.entries.filter { $0.index > after }
            let page = Array(rest.prefix(min(limit, SyncLimits.membershipPage)))
            return try! JSONEncoder().encode(MembershipResponse(entries: page, more: rest.count > page.count))
        }
        #expect(try await client(server).membership(after: -1) == Self.entries)
        let asked = server.asked.withLock { asked in asked }
        #expect(asked.map { $0.after } == [-1, 63, 127])
        #expect(asked.allSatisfy { $0.limit == SyncLimits.membershipPage })
        #expect(try await client(server).membership(after: 140) == Array(Self.entries.dropFirst(141)))
    }

    @Test func aServerThatSendsTheWholeChainWithoutMoreIsReadOnce() async throws {
        let server = Chain { after, _ in
            // A server from before pages: no `more` in its JSON.
            let entries = Self.entries.filter { $0.index > after }.map { ["index": Int($0.index), "entry": $0.entry.base64EncodedString()] as [String: Any] }
            return try! JSONSerialization.data(withJSONObject: ["entries": entries])
        }
        #expect(try await client(server).membership(after: -1) == Self.entries)
        #expect(server.asked.withLock { asked in asked.count } == 1)
    }

    @Test func pagesThatNeverEndAreRefused() async throws {
        // The same page, `more` for ever.
        let stuck = Chain { _, _ in try! JSONEncoder().encode(MembershipResponse(entries: Array(Self.entries.prefix(3)), more: true)) }
        await #expect(throws: KeychainError.decode("")) { _ = try await client(stuck).membership(after: -1) }
        // An empty page that says more follow.
        let empty = Chain { _, _ in try! JSONEncoder().encode(MembershipResponse(entries: [], more: true)) }
        await #expect(throws: KeychainError.decode("")) { _ = try await client(empty).membership(after: -1) }
        // Pages that move on for ever: stopped past any chain a server keeps.
        let endless = Chain { after, _ in
            let page = (1...64).map { MembershipEntry(index: after + Int64($0), entry: Data("x".utf8)) }
            return try! JSONEncoder().encode(MembershipResponse(entries: page, more: true))
        }
        await #expect(throws: KeychainError.decode("")) { _ = try await client(endless).membership(after: -1) }
        #expect(endless.asked.withLock { asked in asked.count } <= 2 * SyncLimits.membershipChain / 64 + 1)
    }
}
