import Foundation

/// Everything one run measured: written as JSON, printed as tables.
struct BenchReport: Codable, Sendable {
    struct Machine: Codable, Sendable {
        var cpu: String
        var cores: Int
        var memoryGiB: Double
        var kernel: String
        /// Where the keychain and the floors' databases lived.
        var directory: String
    }

    /// A floor: one bare part of a request, timed on its own.
    struct Floor: Codable, Sendable {
        var name: String
        /// The table size, for floors that depend on it.
        var items: Int?
        var samples: Int
        var p50Micros: Double
        var p99Micros: Double
    }

    /// One operation through the daemon at one keychain size and client count.
    struct Operation: Codable, Sendable {
        var operation: String
        var items: Int
        var clients: Int
        var samples: Int
        var opsPerSecond: Double
        var p50Micros: Double
        var p99Micros: Double
        /// The floors the operation cannot avoid, and their sum at p50.
        var floor: String
        var floorMicros: Double
        /// p50 over the floor.
        var ratio: Double
    }

    /// A SecKey operation in this process, beside the same operation done bare.
    struct KeyOperation: Codable, Sendable {
        var operation: String
        var samples: Int
        var p50Micros: Double
        var p99Micros: Double
        var floor: String
        var floorMicros: Double
        var ratio: Double
    }

    struct Memory: Codable, Sendable {
        var items: Int
        var daemonResidentKiB: Int
        var daemonPeakKiB: Int
        var enclaveResidentKiB: Int
        var databaseBytes: Int
        /// Whether securityd ran with the Swift runtime linked in, as installed
        /// (`scripts/bench` builds it so); nil when unknown.
        var staticRuntime: Bool? = nil
    }

    /// A whole-process timing: a program started, run and reaped.
    struct WholeProcess: Codable, Sendable {
        var name: String
        var items: Int
        var runs: Int
        var p50Millis: Double
        var maxMillis: Double
    }

    /// A Secret Service provider at one size, measured through one private bus with one client.
    struct SecretServiceRow: Codable, Sendable {
        var provider: String
        var items: Int
        var lookups: Int
        /// `SearchItems`, then `Item.GetSecret` in a plain session.
        var lookupP50Micros: Double
        var lookupP99Micros: Double
        /// The lookup's first call alone.
        var searchP50Micros: Double
        /// `org.freedesktop.DBus.Peer.Ping` to the provider through the bus: one call's floor.
        var pingP50Micros: Double
        /// `GetId` to the bus daemon itself.
        var busP50Micros: Double
        /// Lookup p50 over Ping p50 (a lookup is two calls).
        var ratio: Double
        /// The fill's `CreateItem` calls (nil when the provider already held this many).
        var storeP50Micros: Double?
        var storeP99Micros: Double?
        var secretToolP50Millis: Double
        var secretToolMaxMillis: Double
        /// The provider's resident memory (VmRSS) after the row's lookups, in KiB: for
        /// Trousseau securityd's, the enclave's not included.
        var providerResidentKiB: Int?
        /// A scratch collection's life, as client test suites live it: `CreateCollection`,
        /// one `CreateItem` in it, `Delete` — three calls (nil for gnome-keyring, whose
        /// CreateCollection asks the user through its prompter).
        var scratchCollectionP50Micros: Double? = nil
        /// Whether the items were created in the provider's session collection, which it
        /// keeps in memory only (`--peer-in-memory`), and with replace false.
        var inMemory: Bool? = nil
        /// `Properties.Get` of the filled collection's `Locked` (python's keyring asks it
        /// before every call).
        var lockedP50Micros: Double? = nil
    }

    /// A sync server operation (`--sync`) on one database, against its floor.
    struct SyncRow: Codable, Sendable {
        var backend: String
        var operation: String
        var clients: Int
        var samples: Int
        var opsPerSecond: Double
        var p50Micros: Double
        var p99Micros: Double
        var floor: String
        var floorMicros: Double
        /// p50 over the floor.
        var ratio: Double
    }

    struct Target: Codable, Sendable {
        var target: String
        var measured: String
        var met: Bool
    }

    var machine: Machine
    var date: String
    var smoke: Bool
    var floors: [Floor] = []
    var operations: [Operation] = []
    var memory: [Memory] = []
    var processes: [WholeProcess] = []
    var keys: [KeyOperation] = []
    var secretService: [SecretServiceRow] = []
    var sync: [SyncRow] = []
    /// `--sync-scale`: WebSockets held and the write rate ramped against two instances.
    var syncScale: SyncScaleBench.Report?
    var targets: [Target] = []

    func floor(_ name: String, items: Int? = nil) -> Floor? {
        floors.first { $0.name == name && $0.items == items }
    }

    func operation(_ name: String, items: Int, clients: Int) -> Operation? {
        operations.first { $0.operation == name && $0.items == items && $0.clients == clients }
    }
}

extension BenchReport.Machine {
    /// This machine, from /proc and uname.
    static func current(directory: String) -> Self {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let kib = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Double($0.split(separator: " ")[1]) } ?? 0
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Self(
            cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: (kib / 1_048_576 * 10).rounded() / 10, kernel: "Linux " + release, directory: directory)
    }
}

extension BenchReport.Floor {
    init(_ name: String, items: Int? = nil, _ latencies: Latencies) {
        self.init(name: name, items: items, samples: latencies.count, p50Micros: latencies.p50, p99Micros: latencies.p99)
    }
}
