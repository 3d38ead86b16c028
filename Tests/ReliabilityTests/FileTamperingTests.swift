import Foundation
import GRDB
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

/// Random byte flips anywhere in the database file — pages of items, indexes, the schema,
/// the header, free space — round after round: the daemon keeps serving, no read returns
/// another item's data or a damaged secret, damaged items read as errSecDecode (or are not
/// found, when their index entry is what broke), and items on pages no flip touched read
/// as before.
@Suite struct FileTamperingTests {
    static let items = 60

    static func account(_ i: Int) -> String { "t\(i)" }
    static func secret(_ i: Int) -> KeychainValue { .utf8("secret number \(i) " + String(repeating: "s", count: i % 7)) }

    /// Where each item's bytes are and what kind each page is, read from the pristine file.
    struct Layout {
        var pageSize = 4096
        var itemPages: [Set<Int>] = []  // item index -> pages holding its blobs
        var pageKinds: [Int: String] = [:]  // page -> "genp/leaf", "genp_t_acct…/internal", …
    }

    static func layout(of path: String) throws -> Layout {
        var layout = Layout()
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let queue = try DatabaseQueue(path: path)
        try queue.read { db in
            layout.pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            for row in try Row.fetchAll(db, sql: "SELECT name, pageno, pagetype FROM dbstat") {
                layout.pageKinds[row["pageno"]] = "\(row["name"] as String)/\(row["pagetype"] as String)"
            }
            // Items were added in order, one row each: rowid i + 1 is item i.
            for row in try Row.fetchAll(db, sql: "SELECT rowid, meta, secret FROM genp ORDER BY rowid") {
                var pages = Set<Int>()
                for blob in [row["meta"] as Data, row["secret"] as Data] {
                    if let range = file.range(of: blob) {
                        pages.insert(range.lowerBound / layout.pageSize + 1)
                        pages.insert((range.upperBound - 1) / layout.pageSize + 1)
                    }
                }
                layout.itemPages.append(pages)
            }
        }
        return layout
    }

    @Test func byteFlipsAnywhereInTheDatabase() throws {
        let keychain = try DaemonKeychain()
        let client = try keychain.connect()
        for i in 0..<Self.items {
            _ = try client.add(genericPassword(account: Self.account(i), service: "svc", ["v_Data": Self.secret(i), "labl": .string("label \(i)")]))
        }
        DaemonControl.stop(home: keychain.home)
        let database = keychain.paths.database
        // Fold the WAL into the file, so that every byte of the keychain is in it.
        try DatabaseQueue(path: database).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let pristine = try Data(contentsOf: URL(fileURLWithPath: database))
        let layout = try Self.layout(of: database)
        #expect(layout.itemPages.count == Self.items && layout.itemPages.allSatisfy { !$0.isEmpty })

        let rounds = RunLength.pick(short: 40, long: 2_000)
        let start = ContinuousClock.now
        var outcomes = (correct: 0, decode: 0, notFound: 0, unopenable: 0, flips: 0, sparedChecked: 0)
        for round in 0..<rounds {
            DaemonControl.stop(home: keychain.home)
            // One that has not exited yet (a loaded machine) would serve this round from its
            // cache of the last round's file.
            for daemon in keychain.daemons() { keychain.kill9(daemon) }
            for suffix in ["-wal", "-shm"] { unlink(database + suffix) }
            var damaged = pristine
            var pages = Set<Int>()
            for _ in 0..<Int.random(in: 1...3) {
                let offset = Int.random(in: 0..<damaged.count)
                damaged[offset] ^= UInt8(1 << Int.random(in: 0..<8))
                pages.insert(offset / layout.pageSize + 1)
                outcomes.flips += 1
            }
            try damaged.write(to: URL(fileURLWithPath: database))
            // Flips only in generic-password leaves, other classes' tables and indexes, or
            // unused pages can harm only the items on the flipped leaves; the header, the
            // schema and genp's interior and index pages can harm any.
            let local = pages.allSatisfy { page in
                guard page != 1, let kind = layout.pageKinds[page] else { return page != 1 }
                return kind == "genp/leaf" || !(kind.hasPrefix("genp") || kind.hasPrefix("sqlite_"))
            }
            let described = pages.sorted().map { "\($0) (\(layout.pageKinds[$0] ?? "unused"))" }.joined(separator: ", ")

            let reader: KeychainClient
            do {
                reader = try keychain.connect()
                _ = try? reader.copyMatching(genericPassword(account: "nobody"))
            } catch let error as KeychainError
                where [OSStatusCode.decode, OSStatusCode.io, OSStatusCode.invalidKeychain].contains(error.status)
                    && error.message.hasPrefix("securityd could not start: ")
            {
                // The header or the schema: the daemon cannot open the file, and says why. A flip
                // in a migration's name in grdb_migrations reads as a migration this version does
                // not know: errSecInvalidKeychain, "written by a newer version" (CI, 2026-11-28).
                outcomes.unopenable += 1
                continue
            }
            let daemon = keychain.daemons()
            for i in 0..<Self.items {
                let query = genericPassword(account: Self.account(i), service: "svc", ["r_Data": .bool(true), "r_Attributes": .bool(true)])
                do {
                    let item = try reader.copyMatching(query)?.dictionary
                    if item?["v_Data"] != Self.secret(i) || item?["acct"]?.stringValue != Self.account(i) {
                        Issue.record("round \(round): \(Self.account(i)) read as \(String(describing: item)) after flips in pages \(described)")
                    }
                    outcomes.correct += 1
                } catch let error as KeychainError where [OSStatusCode.decode, OSStatusCode.itemNotFound].contains(error.status) {
                    if local && pages.isDisjoint(with: layout.itemPages[i]) {
                        Issue.record("round \(round): \(Self.account(i)), on no flipped page, read \(error.status) (flips in \(described))")
                    }
                    if error.status == OSStatusCode.decode { outcomes.decode += 1 } else { outcomes.notFound += 1 }
                } catch {
                    Issue.record("round \(round): \(Self.account(i)): \(error) (flips in \(described))")
                }
                if local && pages.isDisjoint(with: layout.itemPages[i]) { outcomes.sparedChecked += 1 }
            }
            // A listing returns whole, correct items only.
            if let all = try? reader.copyMatching(genericPassword(["m_Limit": .string("m_LimitAll"), "r_Data": .bool(true), "r_Attributes": .bool(true)])) {
                for item in all.array?.compactMap(\.dictionary) ?? [] {
                    let index = item["acct"]?.stringValue.flatMap { Int($0.dropFirst()) }
                    if index == nil || item["v_Data"] != Self.secret(index!) {
                        Issue.record("round \(round): the listing holds \(item) (flips in \(described))")
                    }
                }
            }
            #expect(keychain.daemons() == daemon && daemon.count == 1, "round \(round): the daemon kept serving; log:\n\(keychain.logText)")
        }
        RunLength.report(
            "tampering: random bit flips anywhere in the database file",
            "\(rounds) rounds, \(outcomes.flips) flips, \(rounds * Self.items) reads: \(outcomes.correct) correct, \(outcomes.decode) errSecDecode, "
                + "\(outcomes.notFound) not found, \(outcomes.unopenable) rounds with the file unopenable (every call: errSecDecode, errSecIO or errSecInvalidKeychain, \"securityd could not start: SQLite error …\"); "
                + "0 wrong items; \(outcomes.sparedChecked) reads of items on untouched pages all correct; daemon served every round",
            since: start)
    }
}
