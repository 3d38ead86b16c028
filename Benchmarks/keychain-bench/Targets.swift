import BenchWorkload
import Foundation

/// The issue's targets, checked against one run's figures (only those the run measured).
enum Targets {
    static func evaluate(_ report: BenchReport) -> [BenchReport.Target] {
        var targets: [BenchReport.Target] = []
        let sizes = report.memory.map(\.items)
        let socket = report.floor(Floors.Name.socket)?.p50Micros ?? 0
        for size in sizes {
            guard let find = report.operation(Workload.findData.rawValue, items: size, clients: 1),
                let lookup = report.floor(Floors.Name.lookup, items: size)?.p50Micros
            else { continue }
            let floor = socket + lookup
            targets.append(
                .init(
                    target: "find with data, 1 client, \(Table.grouped(size)) items: p50 ≤ 3 × (socket + lookup) and < 100 µs",
                    measured: "\(Table.micros(find.p50Micros)) µs; 3 × \(Table.micros(floor)) = \(Table.micros(3 * floor)) µs",
                    met: find.p50Micros <= 3 * floor && find.p50Micros < 100))
        }
        if let smallest = sizes.min(), let largest = sizes.max(), largest > smallest,
            let small = report.operation(Workload.findData.rawValue, items: smallest, clients: 1),
            let large = report.operation(Workload.findData.rawValue, items: largest, clients: 1)
        {
            targets.append(
                .init(
                    target: "find with data at \(Table.grouped(largest)) items ≤ 1.5 × at \(Table.grouped(smallest))",
                    measured: "\(Table.micros(large.p50Micros)) µs vs \(Table.micros(small.p50Micros)) µs (\(String(format: "%.2f", large.p50Micros / small.p50Micros))×)",
                    met: large.p50Micros <= 1.5 * small.p50Micros))
        }
        for size in sizes {
            for (clients, goal) in [(1, 2_000.0), (8, 5_000.0)] {
                guard let add = report.operation(Workload.add.rawValue, items: size, clients: clients) else { continue }
                targets.append(
                    .init(
                        target: "add, \(clients) client\(clients == 1 ? "" : "s"), \(Table.grouped(size)) items: ≥ \(Table.grouped(Int(goal)))/s",
                        measured: "\(Table.grouped(Int(add.opsPerSecond.rounded())))/s", met: add.opsPerSecond >= goal))
            }
        }
        for (name, goal) in [("first call, no daemon running", 150.0), ("security find-generic-password -w", 5.0)] {
            guard let process = report.processes.first(where: { $0.name == name }) else { continue }
            targets.append(
                .init(
                    target: "\(name): p50 < \(Int(goal)) ms", measured: String(format: "%.2f ms", process.p50Millis),
                    met: process.p50Millis < goal))
        }
        if let largest = report.memory.max(by: { $0.items < $1.items }) {
            targets.append(
                .init(
                    target: "securityd resident at \(Table.grouped(largest.items)) items < 100 MiB (goal at 1,000,000)",
                    measured: "\(Table.mebibytes(largest.daemonResidentKiB * 1024)) MiB", met: largest.daemonResidentKiB < 100 * 1024))
        }
        return targets
    }

    /// The sync issue's: a one-write batch within 3× of an HTTP round trip plus the
    /// database's commit, and a change seen elsewhere by its hint within 2× of that batch
    /// plus one pull, sooner than polling.
    static func sync(_ rows: [BenchReport.SyncRow]) -> [BenchReport.Target] {
        var targets: [BenchReport.Target] = []
        for backend in Set(rows.map(\.backend)).sorted() {
            let mine = rows.filter { $0.backend == backend }
            if let batch = mine.first(where: { $0.operation == "batch, 1 write" && $0.clients == 1 }) {
                targets.append(
                    .init(
                        target: "\(backend): batch of 1 write, p50 ≤ 3 × (\(batch.floor))",
                        measured: "\(Table.micros(batch.p50Micros)) µs; 3 × \(Table.micros(batch.floorMicros)) = \(Table.micros(3 * batch.floorMicros)) µs",
                        met: batch.ratio <= 3))
            }
            if let hinted = mine.first(where: { $0.operation.hasSuffix("WebSocket hint") }),
                let polled = mine.first(where: { $0.operation.contains("polling") })
            {
                targets.append(
                    .init(
                        target: "\(backend): change visible by hint, p50 ≤ 2 × (\(hinted.floor)) and below polling's",
                        measured: "\(Table.micros(hinted.p50Micros)) µs; 2 × \(Table.micros(hinted.floorMicros)) = \(Table.micros(2 * hinted.floorMicros)) µs; polling \(Table.micros(polled.p50Micros)) µs",
                        met: hinted.ratio <= 2 && hinted.p50Micros < polled.p50Micros))
            }
        }
        return targets
    }

    /// The Secret Service issue's: Trousseau's lookup within 2× of one Ping to it through
    /// the bus, and faster than gnome-keyring's at every size both were measured at.
    static func secretService(_ rows: [BenchReport.SecretServiceRow]) -> [BenchReport.Target] {
        var targets: [BenchReport.Target] = []
        for row in rows where row.provider == SecretServiceBench.trousseau {
            targets.append(
                .init(
                    target: "Secret Service lookup, \(Table.grouped(row.items)) items: p50 ≤ 2 × Ping",
                    measured: "\(Table.micros(row.lookupP50Micros)) µs; 2 × \(Table.micros(row.pingP50Micros)) = \(Table.micros(2 * row.pingP50Micros)) µs",
                    met: row.ratio <= 2))
            if let scratch = row.scratchCollectionP50Micros, let store = row.storeP50Micros {
                // Three calls, two of them one commit each (the collection's row; the item; the
                // delete is one more): within two CreateItems and two Pings more.
                let bound = 2 * store + 2 * row.pingP50Micros
                targets.append(
                    .init(
                        target: "Secret Service scratch collection, \(Table.grouped(row.items)) items: p50 ≤ 2 × CreateItem + 2 × Ping",
                        measured: "\(Table.micros(scratch)) µs; bound \(Table.micros(bound)) µs",
                        met: scratch <= bound))
            }
            guard let peer = rows.first(where: { $0.provider == SecretServiceBench.gnomeKeyring && $0.items == row.items }) else { continue }
            targets.append(
                .init(
                    target: "Secret Service lookup, \(Table.grouped(row.items)) items: faster than gnome-keyring"
                        + (peer.inMemory == true ? " (its items in memory)" : ""),
                    measured: "\(Table.micros(row.lookupP50Micros)) µs vs \(Table.micros(peer.lookupP50Micros)) µs",
                    met: row.lookupP50Micros < peer.lookupP50Micros))
        }
        return targets
    }
}
