import Foundation
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

/// Many clients mix every operation on a few shared items, and the history is checked
/// against a model for lost updates and phantom duplicates.
///
/// Each item carries a version in its label, `I:n` — incarnation `I` (a fresh id per add),
/// `n` changes since — and data naming the same version. Updates and deletes are
/// compare-and-swap: they match the label a read just returned, so an update from `I:n`
/// succeeds only if nobody changed the item since. Then, per item: at most one update
/// succeeds from each version (otherwise one was lost) and they form the chain
/// 0→1→…→m; a delete succeeds only from the last version; at most one incarnation is
/// alive at a time (otherwise a duplicate); every read returns a version that was written,
/// with its own data; and what is stored at the end is exactly the live incarnation.
@Suite struct ConcurrencyModelTests {
    /// What one client saw succeed, and what it read.
    struct History: Sendable {
        var adds: [(key: Int, incarnation: String)] = []
        var updates: [(key: Int, incarnation: String, from: Int)] = []
        var deletes: [(key: Int, incarnation: String, at: Int)] = []
        var reads: [(key: Int, incarnation: String, version: Int)] = []
        var listings = 0
        var operations = 0
        var problems: [String] = []
    }

    static func account(_ key: Int) -> String { "shared-\(key)" }
    static func label(_ incarnation: String, _ version: Int) -> String { "\(incarnation):\(version)" }
    static func data(_ key: Int, _ incarnation: String, _ version: Int) -> KeychainValue {
        .utf8("\(account(key))=\(label(incarnation, version))")
    }

    /// `I:n` out of a label.
    static func version(of item: [String: KeychainValue]) -> (String, Int)? {
        guard let label = item["labl"]?.stringValue, let colon = label.lastIndex(of: ":"),
            let version = Int(label[label.index(after: colon)...])
        else { return nil }
        return (String(label[..<colon]), version)
    }

    @Test func manyClientsOnSharedItemsMatchTheModel() throws {
        let keychain = try DaemonKeychain()
        let clients = RunLength.pick(short: 12, long: 16)
        let operations = RunLength.pick(short: 250, long: 5_000)
        let keys = 6
        let start = ContinuousClock.now
        let histories = try onThreads(clients) { client in
            try Self.mix(keychain.connect(), client: client, operations: operations, keys: keys)
        }

        var problems = histories.flatMap(\.problems)
        // Every item may have been deleted last (a random history can end so): none found is an empty list.
        let final: [[String: KeychainValue]]
        do {
            final = try keychain.connect().copyMatching(
                genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true), "r_Data": .bool(true)]))?
                .array?.compactMap(\.dictionary) ?? []
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            final = []
        }
        for key in 0..<keys {
            let adds = histories.flatMap { $0.adds.filter { $0.key == key }.map(\.incarnation) }
            let updates = histories.flatMap { $0.updates.filter { $0.key == key } }
            let deletes = histories.flatMap { $0.deletes.filter { $0.key == key } }
            var last: [String: Int] = [:]  // each incarnation's final version
            for incarnation in adds {
                let froms = updates.filter { $0.incarnation == incarnation }.map(\.from).sorted()
                if froms != Array(0..<froms.count) {
                    problems.append("\(Self.account(key)) \(incarnation): updates succeeded from versions \(froms) (lost update)")
                }
                last[incarnation] = froms.count
            }
            for delete in deletes where last[delete.incarnation] != delete.at {
                problems.append("\(Self.account(key)) \(delete.incarnation) deleted at \(delete.at), last version \(String(describing: last[delete.incarnation]))")
            }
            let deleted = Set(deletes.map(\.incarnation))
            if deleted.count != deletes.count { problems.append("\(Self.account(key)): an incarnation deleted twice") }
            let alive = adds.filter { !deleted.contains($0) }
            if alive.count > 1 { problems.append("\(Self.account(key)): \(alive.count) incarnations alive (duplicate)") }
            for read in histories.flatMap({ $0.reads.filter { $0.key == key } }) {
                guard let final = last[read.incarnation], read.version <= final else {
                    problems.append("\(Self.account(key)): read \(read.incarnation):\(read.version), which no acknowledged write made")
                    continue
                }
            }
            let stored = final.filter { $0["acct"]?.stringValue == Self.account(key) }
            switch (alive.first, stored.count) {
            case (nil, 0): break
            case (let incarnation?, 1):
                let expected = Self.label(incarnation, last[incarnation]!)
                if stored[0]["labl"]?.stringValue != expected || stored[0]["v_Data"] != Self.data(key, incarnation, last[incarnation]!) {
                    problems.append("\(Self.account(key)) holds \(String(describing: stored[0]["labl"])), the model \(expected)")
                }
            default:
                problems.append("\(Self.account(key)): \(stored.count) stored, \(alive.count) alive")
            }
        }
        for problem in problems { Issue.record("\(problem)") }
        let counts = histories.reduce(into: (adds: 0, updates: 0, deletes: 0, reads: 0, listings: 0, total: 0)) {
            $0.adds += $1.adds.count; $0.updates += $1.updates.count; $0.deletes += $1.deletes.count
            $0.reads += $1.reads.count; $0.listings += $1.listings; $0.total += $1.operations
        }
        #expect(counts.updates > 0 && counts.deletes > 0 && counts.adds > keys, "every operation happened")
        RunLength.report(
            "concurrency: clients on shared items against a model",
            "\(clients) clients × \(operations) operations on \(keys) items: \(counts.total) in all, succeeded "
                + "\(counts.adds) adds, \(counts.updates) compare-and-swap updates, \(counts.deletes) deletes, "
                + "\(counts.reads) reads, \(counts.listings) listings; \(problems.count) lost updates or duplicates", since: start)
    }

    /// One client's random mix: add, read, then update or delete what it read, list all.
    static func mix(_ client: KeychainClient, client index: Int, operations: Int, keys: Int) -> History {
        var history = History()
        var serial = 0
        for _ in 0..<operations {
            history.operations += 1
            let key = Int.random(in: 0..<keys)
            let account = account(key)
            switch Int.random(in: 0..<10) {
            case 0..<3:
                serial += 1
                let incarnation = "c\(index).\(serial)"
                let status = osStatus {
                    try client.add(genericPassword(account: account, ["labl": .string(label(incarnation, 0)), "v_Data": data(key, incarnation, 0)]))
                }
                switch status {
                case OSStatusCode.success: history.adds.append((key, incarnation))
                case OSStatusCode.duplicateItem: break
                default: history.problems.append("add \(account): \(status)")
                }
            case 3..<9:
                // Read, then change what was read — unless someone changed it first.
                let status: OSStatusCode
                var read: (String, Int)?
                do {
                    let item = try client.copyMatching(genericPassword(account: account, ["r_Attributes": .bool(true), "r_Data": .bool(true)]))
                    guard let item = item?.dictionary, let version = Self.version(of: item) else {
                        history.problems.append("read \(account): no versioned item")
                        continue
                    }
                    if item["v_Data"] != data(key, version.0, version.1) {
                        history.problems.append("read \(account): label \(version) with other data (torn read)")
                    }
                    history.reads.append((key, version.0, version.1))
                    read = version
                    status = .success
                } catch let error as KeychainError {
                    status = error.status
                } catch {
                    status = OSStatusCode(rawValue: Int32.min)
                }
                guard let (incarnation, version) = read else {
                    if status != OSStatusCode.itemNotFound { history.problems.append("read \(account): \(status)") }
                    continue
                }
                let match = genericPassword(account: account, ["labl": .string(label(incarnation, version))])
                if Bool.random() || version == 0 {
                    let changed = osStatus {
                        try client.update(match, attributes: ["labl": .string(label(incarnation, version + 1)), "v_Data": data(key, incarnation, version + 1)])
                    }
                    switch changed {
                    case OSStatusCode.success: history.updates.append((key, incarnation, version))
                    case OSStatusCode.itemNotFound: break  // someone changed it first
                    default: history.problems.append("update \(account): \(changed)")
                    }
                } else {
                    let deleted = osStatus { try client.delete(match) }
                    switch deleted {
                    case OSStatusCode.success: history.deletes.append((key, incarnation, version))
                    case OSStatusCode.itemNotFound: break
                    default: history.problems.append("delete \(account): \(deleted)")
                    }
                }
            default:
                // A listing never shows an item twice, nor one whose data is not its label's.
                do {
                    let all = try client.copyMatching(
                        genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true), "r_Data": .bool(true)]))?
                        .array?.compactMap(\.dictionary) ?? []
                    let accounts = all.compactMap { $0["acct"]?.stringValue }
                    if Set(accounts).count != accounts.count { history.problems.append("a listing holds \(accounts.sorted())") }
                    for item in all {
                        guard let version = Self.version(of: item), let key = Int(item["acct"]?.stringValue?.dropFirst("shared-".count) ?? ""),
                            item["v_Data"] == data(key, version.0, version.1)
                        else {
                            history.problems.append("a listing holds a torn item: \(item["labl"] ?? .string("?"))")
                            continue
                        }
                        history.reads.append((key, version.0, version.1))
                    }
                    history.listings += 1
                } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
                    history.listings += 1
                } catch {
                    history.problems.append("listing: \(error)")
                }
            }
        }
        return history
    }
}
