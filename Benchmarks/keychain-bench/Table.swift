import Foundation

/// The report as text tables (Markdown, so docs/PERFORMANCE.md can hold them as printed).
enum Table {
    static func floors(_ floors: [BenchReport.Floor]) -> String {
        render(
            ["floor", "p50 µs", "p99 µs"],
            floors.map { [$0.name, micros($0.p50Micros), micros($0.p99Micros)] })
    }

    static func operations(_ rows: [BenchReport.Operation], size: Int, lookup: BenchReport.Floor) -> String {
        "\(grouped(size)) items (\(Floors.Name.lookup): \(micros(lookup.p50Micros)) µs p50)\n\n"
            + render(
                ["operation", "clients", "ops/s", "p50 µs", "p99 µs", "floor µs", "p50 / floor"],
                rows.map {
                    [
                        $0.operation, String($0.clients), grouped(Int($0.opsPerSecond.rounded())), micros($0.p50Micros),
                        micros($0.p99Micros), micros($0.floorMicros), String(format: "%.1f×", $0.ratio),
                    ]
                })
    }

    static func processes(_ rows: [BenchReport.WholeProcess]) -> String {
        render(
            ["whole process", "items", "runs", "p50 ms", "max ms"],
            rows.map { [$0.name, grouped($0.items), String($0.runs), String(format: "%.2f", $0.p50Millis), String(format: "%.2f", $0.maxMillis)] })
    }

    static func keys(_ rows: [BenchReport.KeyOperation]) -> String {
        render(
            ["key operation", "p50 µs", "p99 µs", "floor", "floor µs", "p50 / floor"],
            rows.map {
                [$0.operation, micros($0.p50Micros), micros($0.p99Micros), $0.floor, micros($0.floorMicros), String(format: "%.1f×", $0.ratio)]
            })
    }

    static func secretService(_ rows: [BenchReport.SecretServiceRow]) -> String {
        render(
            ["provider", "items", "lookup p50 µs", "p99 µs", "Ping p50 µs", "lookup / Ping", "Get Locked p50 µs", "CreateItem p50 µs",
             "secret-tool lookup p50 ms", "scratch collection p50 µs", "RSS MiB"],
            rows.map {
                [
                    $0.provider + ($0.inMemory == true ? " (in memory)" : ""), grouped($0.items), micros($0.lookupP50Micros), micros($0.lookupP99Micros), micros($0.pingP50Micros),
                    String(format: "%.2f×", $0.ratio), $0.lockedP50Micros.map(micros) ?? "–", $0.storeP50Micros.map(micros) ?? "–", String(format: "%.2f", $0.secretToolP50Millis),
                    $0.scratchCollectionP50Micros.map(micros) ?? "–",
                    $0.providerResidentKiB.map { String(format: "%.1f", Double($0) / 1024) } ?? "–",
                ]
            })
    }

    static func sync(_ rows: [BenchReport.SyncRow]) -> String {
        render(
            ["database", "operation", "clients", "p50 µs", "p99 µs", "ops/s", "floor", "floor µs", "p50 / floor"],
            rows.map {
                [
                    $0.backend, $0.operation, String($0.clients), micros($0.p50Micros), micros($0.p99Micros), grouped(Int($0.opsPerSecond.rounded())),
                    $0.floor, micros($0.floorMicros), String(format: "%.2f×", $0.ratio),
                ]
            })
    }

    static func targets(_ targets: [BenchReport.Target]) -> String {
        render(["target", "measured", "met"], targets.map { [$0.target, $0.measured, $0.met ? "yes" : "NO"] })
    }

    static func memory(_ rows: [BenchReport.Memory]) -> String {
        render(
            ["items", "securityd RSS MiB", "peak MiB", "enclave RSS MiB", "database MiB", "Swift runtime"],
            rows.map {
                [
                    grouped($0.items), mebibytes($0.daemonResidentKiB * 1024), mebibytes($0.daemonPeakKiB * 1024),
                    mebibytes($0.enclaveResidentKiB * 1024), mebibytes($0.databaseBytes),
                    $0.staticRuntime.map { $0 ? "linked in" : "loaded" } ?? "–",
                ]
            })
    }

    /// A Markdown table with aligned columns; text left, figures right.
    static func render(_ header: [String], _ rows: [[String]]) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| "
                + cells.enumerated().map { column, cell in
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + padding : padding + cell
                }.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.enumerated().map { column, width in
            column == 0 ? String(repeating: "-", count: width + 2) : " " + String(repeating: "-", count: width) + ":"
        }.joined(separator: "|") + "|"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    static func micros(_ value: Double) -> String {
        value < 10 ? String(format: "%.2f", value) : value < 1_000 ? String(format: "%.1f", value) : grouped(Int(value.rounded()))
    }

    static func mebibytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }

    /// 1000000 → 1,000,000.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }
}
