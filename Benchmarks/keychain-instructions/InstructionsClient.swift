import BenchWorkload
import Foundation
import KeychainClient
import KeychainModel

/// The client half, run under callgrind: one connection to the keychain, driven by lines on
/// standard input so that the measuring process can zero and read the counters of all
/// three processes around exactly the operations it counts.
///
/// Requests, one per line, fields separated by tabs: `fill<TAB>N` (add `item-0`…`item-N-1`),
/// `run<TAB>OPERATION<TAB>COUNT<TAB>TAG<TAB>ITEMS` (``Workload/perform(client:offset:_:items:tag:)``
/// for n in 0..<COUNT). Each is answered `ok` or `error<TAB>why`; end of input ends the client.
struct InstructionsClient {
    let client: KeychainClient

    /// The fields of each request, tab-separated.
    static let separator: Character = "\t"

    func serve() {
        while let line = readLine() {
            let fields = line.split(separator: Self.separator, omittingEmptySubsequences: false).map(String.init)
            do {
                try handle(fields)
                print("ok")
            } catch {
                print("error\(Self.separator)\(error)")
            }
            fflush(nil)  // all streams: `stdout` is global mutable state to Swift 6
        }
    }

    private func handle(_ fields: [String]) throws {
        switch fields.first {
        case "fill":
            guard fields.count == 2, let count = Int(fields[1]) else { throw WorkloadError("fill needs a count") }
            for index in 0..<count {
                _ = try client.add(BenchItems.addQuery(account: "item-\(index)", secret: BenchItems.secret(index)))
            }
        case "run":
            guard fields.count == 5, let workload = Workload(rawValue: fields[1]), let count = Int(fields[2]), let items = Int(fields[4]) else {
                throw WorkloadError("run needs an operation, a count, a tag and the item count")
            }
            for n in 0..<count {
                try workload.perform(client: client, offset: 0, n, items: items, tag: fields[3])
            }
        default:
            throw WorkloadError("unknown request \(fields.first ?? "")")
        }
    }
}
