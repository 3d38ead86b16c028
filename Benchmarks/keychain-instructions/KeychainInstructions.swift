import ArgumentParser
import BenchWorkload
import Foundation
import KeychainClient
import KeychainModel

/// keychain-instructions: instructions per operation in securityd, the enclave and the
/// client, counted by callgrind, against the committed baseline. Instruction counts do not
/// swing from run to run or host to host as wall-clock times do, so CI can hold them.
@main
struct KeychainInstructions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain-instructions",
        abstract: "Counts instructions per keychain operation in securityd, the enclave and the client under callgrind.",
        discussion: """
            Run it through scripts/bench-instructions, which builds release binaries, strips their \
            DWARF 5 (valgrind 3.19 cannot read it) and puts securityd and trousseau-enclave beside \
            this program.
            """,
        subcommands: [Measure.self, Client.self],
        defaultSubcommand: Measure.self)
}

extension KeychainInstructions {
    struct Measure: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Measures every row; with --check, fails on a row grown beyond the baseline.")

        @Option(help: "Items in the keychain.")
        var items = 1_000

        @Option(help: "Operations counted per row.")
        var operations = 200

        @Option(help: "Operations run before counting, per row.")
        var warmUp = 20

        @Option(help: "The committed baseline.")
        var baseline = "Benchmarks/instructions-baseline.json"

        @Flag(help: "Fail (exit 1) when any process's instructions in any row grew more than 3 % over the baseline.")
        var check = false

        @Flag(help: "Write the measurement as the new baseline (say why in docs/PERFORMANCE.md in the same change).")
        var writeBaseline = false

        @Option(help: "Also write the measurement here as JSON.")
        var json: String?

        @Flag(help: "Keep each row's callgrind profile (for callgrind_annotate) and print where.")
        var keepProfiles = false

        func validate() throws {
            guard items > 0, operations > 0, warmUp >= 0 else { throw ValidationError("items and operations must be positive") }
            guard !(check && writeBaseline) else { throw ValidationError("--check compares with the baseline --write-baseline would replace: one or the other") }
        }

        func run() throws {
            signal(SIGPIPE, SIG_IGN)  // a client that died answers EPIPE, and the cleanup still runs
            let measurement = InstructionsMeasurement(items: items, operations: operations, warmUp: warmUp, keepProfiles: keepProfiles)
            let report = try measurement.run { line in
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            print(Self.table(report))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let encoded = try encoder.encode(report) + Data("\n".utf8)
            if let json { try encoded.write(to: URL(fileURLWithPath: json)) }
            if writeBaseline {
                try encoded.write(to: URL(fileURLWithPath: baseline))
                print("baseline written: \(baseline)")
            }
            guard check else { return }
            let committed = try JSONDecoder().decode(InstructionReport.self, from: Data(contentsOf: URL(fileURLWithPath: baseline)))
            let (failures, notes) = committed.compare(report)
            for note in notes { print("fewer: \(note) (the baseline may be lowered)") }
            for failure in failures { print("grew: \(failure)") }
            guard failures.isEmpty else {
                print("instructions per operation grew more than 3 % over \(baseline): cut them, or update the baseline and say why in docs/PERFORMANCE.md")
                throw ExitCode(1)
            }
            print("every row is within 3 % of \(baseline)")
        }

        static func table(_ report: InstructionReport) -> String {
            let header = ["operation (\(report.items) items)", "securityd", "enclave", "client"]
            let rows = report.rows.map { [$0.operation, $0.securityd.formatted(), $0.enclave.formatted(), $0.client.formatted()] }
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    column == 0 ? cell.padding(toLength: widths[0], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[column] - cell.count) + cell
                }.joined(separator: " | ")
            }
            return ([line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")] + rows.map(line))
                .joined(separator: "\n") + "\n(instructions per operation, callgrind; the start row whole)"
        }
    }

    /// The client under callgrind (started by ``Measure``).
    struct Client: ParsableCommand {
        static let configuration = CommandConfiguration(shouldDisplay: false)

        @Option var home: String
        @Option var daemon: String

        func run() throws {
            // securityd under callgrind takes seconds to start.
            let client = try KeychainClient.connect(KeychainPaths(home: home), daemon: daemon, timeout: .seconds(600))
            InstructionsClient(client: client).serve()
        }
    }
}
