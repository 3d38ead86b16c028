import Dispatch
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

/// Concurrent writes share transactions (group commit); each must still stand or fall alone.
@Suite struct GroupCommitTests {
    let keychain: TemporaryKeychain
    init() throws { keychain = try TemporaryKeychain() }

    @Test func concurrentWritesAreEachStoredAndAFailingOneTakesNoOtherWithIt() throws {
        let store = keychain.store, caller = keychain.caller
        let threads = 12, perThread = 25
        let outcomes = BlockingMutex<(added: Int, duplicates: Int, other: [OSStatusCode])>((0, 0, []))
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for n in 0..<perThread {
                // Every thread also races for one shared item: exactly one add may win.
                let account = n == perThread / 2 ? "shared" : "t\(thread)-\(n)"
                do {
                    _ = try store.add(genericPassword(account: account, service: "batch", ["v_Data": .data(.init(utf8: account))]), caller: caller)
                    outcomes.withLock { $0.added += 1 }
                } catch let error as KeychainError where error == .duplicateItem {
                    outcomes.withLock { $0.duplicates += 1 }
                } catch let error as KeychainError {
                    outcomes.withLock { $0.other.append(error.status) }
                } catch {
                    outcomes.withLock { $0.other.append(.internalComponent) }
                }
            }
        }
        let result = outcomes.withLock { $0 }
        #expect(result.other.isEmpty)
        #expect(result.duplicates == threads - 1)
        #expect(result.added == threads * (perThread - 1) + 1)
        let stored = try store.copyMatching(
            genericPassword(service: "batch", ["r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll")]), caller: caller)
        guard case .array(let items)? = stored else {
            Issue.record("no items")
            return
        }
        #expect(items.count == result.added)
        // Each item holds its own data: no write landed in another's row.
        for thread in 0..<threads {
            let account = "t\(thread)-0"
            let data = try store.copyMatching(genericPassword(account: account, service: "batch", ["r_Data": .bool(true)]), caller: caller)
            #expect(data == .data(.init(utf8: account)))
        }
    }
}
