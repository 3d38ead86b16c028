import Foundation
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

/// Writers add, update and delete through the daemon while the daemon, or the enclave, is
/// killed with SIGKILL at a random moment, round after round. After each restart the
/// keychain must hold every acknowledged write, and an unacknowledged one (cut by the kill:
/// errSecIO) either whole or not at all; the database passes `PRAGMA integrity_check`.
@Suite struct CrashSafetyTests {
    enum Victim: String, CaseIterable, Sendable { case daemon, enclave }

    @Test(arguments: Victim.allCases)
    func acknowledgedWritesSurviveSIGKILL(of victim: Victim) throws {
        let keychain = try DaemonKeychain()
        let rounds = RunLength.pick(short: 12, long: 400)
        let writers = 4, itemsPerWriter = 8
        let models = (0..<writers).map { _ in WriterModel(items: itemsPerWriter) }
        let clients = try (0..<writers).map { _ in try keychain.connect() }
        let start = ContinuousClock.now
        var killed = 0
        for round in 0..<rounds {
            let stop = StopFlag()
            let killer = Thread {
                usleep(UInt32.random(in: 2_000...60_000))
                let pid = victim == .daemon ? keychain.daemons().first : keychain.enclaves().first
                if let pid { keychain.kill9(pid) }
                usleep(20_000)  // the writers go on against the restarted processes
                stop.set()
            }
            killer.start()
            _ = try onThreads(writers) { writer in
                models[writer].run(on: clients[writer], writer: writer, until: stop)
            }
            killed += 1
            // A new connection (the daemon restarts if it is the one that died). An empty
            // keychain answers errSecItemNotFound: on a loaded machine a kill can come before
            // any writer's first write is acknowledged (CI, 2026-11-27).
            let listing: KeychainValue?
            do {
                listing = try keychain.connect().copyMatching(
                    genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true), "r_Data": .bool(true)]))
            } catch let error as KeychainError where error.status == .itemNotFound {
                listing = nil
            }
            let items = listing?.array?.compactMap(\.dictionary) ?? []
            var byWriter = Array(repeating: [Int: [String: KeychainValue]](), count: writers)
            for item in items {
                guard let account = item["acct"]?.stringValue, let (writer, index) = WriterModel.parse(account) else {
                    Issue.record("round \(round): an item nobody wrote: \(item)")
                    continue
                }
                #expect(byWriter[writer][index] == nil, "round \(round): \(account) twice")
                byWriter[writer][index] = item
            }
            for writer in 0..<writers {
                for problem in models[writer].reconcile(byWriter[writer], writer: writer) {
                    Issue.record("round \(round) after killing the \(victim): \(problem)\ndaemon log:\n\(keychain.logText)")
                }
            }
            #expect(try keychain.integrityCheck() == "ok", "round \(round)")
        }
        // Daemons that clients started at once after a kill, and that found the lock taken,
        // may still be on their way out.
        for _ in 0..<500 where keychain.daemons().count > 1 || keychain.enclaves().count > 1 { usleep(10_000) }
        #expect(keychain.daemons().count == 1 && keychain.enclaves().count == 1,
                "one daemon and one enclave: \(keychain.daemons()), \(keychain.enclaves()); daemon log:\n\(keychain.logText)")
        let totals = models.reduce(into: WriterModel.Counts()) { $0.add($1.counts) }
        #expect(totals.acknowledged > rounds * writers, "the writers made progress")
        #expect(totals.unexpected == 0)
        RunLength.report(
            "crash safety: SIGKILL of the \(victim) during writes",
            "\(killed) kills, \(totals.acknowledged + totals.cut + totals.refused) operations by \(writers) writers "
                + "(\(totals.acknowledged) acknowledged, \(totals.cut) cut by a kill, \(totals.refused) refused when the enclave died), "
                + "0 lost, integrity_check ok after each", since: start)
    }
}

/// One writer's items and what each may hold: one state when every write to it was
/// answered, several while a write cut by a kill may or may not have been applied.
final class WriterModel: @unchecked Sendable {
    // @unchecked: used by one thread at a time (its writer, then the checking test).
    enum State: Hashable { case absent, present(version: Int) }

    struct Counts {
        var acknowledged = 0, cut = 0, refused = 0, unexpected = 0
        mutating func add(_ other: Counts) {
            acknowledged += other.acknowledged; cut += other.cut; refused += other.refused; unexpected += other.unexpected
        }
    }

    private(set) var possible: [Set<State>]
    private(set) var counts = Counts()
    private var version = 0
    private var problems: [String] = []

    init(items: Int) { possible = Array(repeating: [.absent], count: items) }

    static func account(_ writer: Int, _ index: Int) -> String { "w\(writer)-\(index)" }
    static func parse(_ account: String) -> (Int, Int)? {
        let parts = account.dropFirst().split(separator: "-")
        guard account.hasPrefix("w"), parts.count == 2, let writer = Int(parts[0]), let index = Int(parts[1]) else { return nil }
        return (writer, index)
    }
    static func data(_ account: String, _ version: Int) -> KeychainValue { .utf8("\(account):v\(version)") }

    /// Random writes until `stop` is set.
    func run(on client: KeychainClient, writer: Int, until stop: StopFlag) {
        while !stop.isSet {
            let index = Int.random(in: 0..<possible.count)
            let account = Self.account(writer, index)
            version += 1
            let fields: [String: KeychainValue] = ["labl": .string("v\(version)"), "v_Data": Self.data(account, version)]
            let before = possible[index]
            let mayBePresent = before.contains { $0 != .absent }
            switch Int.random(in: 0..<3) {
            case 0:
                let status = osStatus { try client.add(genericPassword(account: account, fields)) }
                apply(status, index, account, "add",
                      applied: [.present(version: version)], ifMissing: nil,
                      ifDuplicate: mayBePresent ? before.filter { $0 != .absent } : nil, mayApply: before.contains(.absent))
            case 1:
                let status = osStatus { try client.update(genericPassword(account: account), attributes: fields) }
                apply(status, index, account, "update",
                      applied: [.present(version: version)], ifMissing: before.contains(.absent) ? [.absent] : nil,
                      ifDuplicate: nil, mayApply: mayBePresent)
            default:
                let status = osStatus { try client.delete(genericPassword(account: account)) }
                apply(status, index, account, "delete",
                      applied: [.absent], ifMissing: before.contains(.absent) ? [.absent] : nil,
                      ifDuplicate: nil, mayApply: mayBePresent)
            }
        }
    }

    /// Updates item `index`'s possible states for an operation's `status`.
    private func apply(
        _ status: OSStatusCode, _ index: Int, _ account: String, _ operation: String,
        applied: Set<State>, ifMissing: Set<State>?, ifDuplicate: Set<State>?, mayApply: Bool
    ) {
        switch status {
        case OSStatusCode.success where mayApply:
            possible[index] = applied
            counts.acknowledged += 1
        case OSStatusCode.itemNotFound where ifMissing != nil:
            possible[index] = ifMissing!
            counts.acknowledged += 1
        case OSStatusCode.duplicateItem where ifDuplicate != nil:
            possible[index] = ifDuplicate!
            counts.acknowledged += 1
        case OSStatusCode.io:  // cut by the daemon's death: applied or not
            if mayApply { possible[index].formUnion(applied) }
            counts.cut += 1
        case OSStatusCode.notAvailable:  // the enclave died during the request: not applied
            counts.refused += 1
        default:
            counts.unexpected += 1
            problems.append("\(operation) \(account) answered \(status) when it could be \(possible[index])")
        }
    }

    /// Checks what the keychain holds (`stored`, by item index) against the model and
    /// narrows every item to what was found. Returns the problems found since the last call.
    func reconcile(_ stored: [Int: [String: KeychainValue]], writer: Int) -> [String] {
        var found = problems
        problems = []
        for index in possible.indices {
            let account = Self.account(writer, index)
            let state: State
            if let item = stored[index] {
                guard let label = item["labl"]?.stringValue, label.hasPrefix("v"), let version = Int(label.dropFirst()) else {
                    found.append("\(account) has no version label: \(item)")
                    continue
                }
                // Attributes and secret come from the same write, never half of one.
                if item["v_Data"] != Self.data(account, version) {
                    found.append("\(account) label v\(version) with data \(String(describing: item["v_Data"]))")
                }
                state = .present(version: version)
            } else {
                state = .absent
            }
            if !possible[index].contains(state) {
                found.append("\(account) is \(state), the model allows \(possible[index])")
            }
            possible[index] = [state]
        }
        return found
    }
}
