import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainHardening
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

// keychain-probe: a small app for code-signing tests. Copies of it are signed with
// different teams and entitlements, and each reports what the daemon lets it do.
//
//   keychain-probe add ACCOUNT DATA [GROUP]
//   keychain-probe find ACCOUNT [GROUP]     prints the item's group and data
//   keychain-probe delete ACCOUNT [GROUP]
//   keychain-probe list                     every item it can see, as ACCOUNT@GROUP
//
//   keychain-probe add-biometric ACCOUNT DATA   an item only a finger (biometryAny) opens
//   keychain-probe harden                   applies ProcessHardening; prints dumpable and core limit before and after
//   keychain-probe lock-memory              locks memory as the enclave does; prints what is locked and resident
//
// The first line printed is always "status=<OSStatus>".

/// Tests flip a byte of this string to modify a signed copy without breaking it.
let marker = "TROUSSEAU-PROBE-MARKER-0123456789"

let arguments = Array(CommandLine.arguments.dropFirst())
guard let operation = arguments.first else {
    print("usage: keychain-probe add|find|delete|list … (\(marker))")
    exit(2)
}
if operation == "harden" {
    func state() -> String {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        return "dumpable=\(ProcessHardening.isDumpable ? 1 : 0) core=\(limit.rlim_cur)"
    }
    let before = state()
    do {
        try ProcessHardening.apply()
        print("status=0\nbefore \(before)\nafter \(state())")
        exit(0)
    } catch {
        print("status=\((error as? KeychainError)?.status.rawValue ?? -1)")
        exit(1)
    }
}
if operation == "lock-memory" {
    /// Each mapping of /proc/self/smaps: its start address, its path (empty for anonymous
    /// memory) and its fields in KiB.
    func mappings() -> [(start: UInt, path: String, fields: [String: Int])] {
        var result: [(start: UInt, path: String, fields: [String: Int])] = []
        // Read whole with read(2): /proc files have no size, and a reader that trusts
        // st_size stops at its first page.
        let fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)
        let bytes = fd >= 0 ? Spawn.readAll(fd, limit: 1 << 26) : []
        if fd >= 0 { close(fd) }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = words.first else { continue }
            if first.hasSuffix(":") {  // a field line: "Rss:  652 kB"
                if !result.isEmpty, words.count >= 2, let value = Int(words[1]) { result[result.count - 1].fields[String(first.dropLast())] = value }
            } else if let dash = first.firstIndex(of: "-"), let start = UInt(first[..<dash], radix: 16) {  // a mapping's header
                result.append((start, words.count > 5 ? words[5...].joined(separator: " ") : "", [:]))
            }
        }
        return result
    }
    let locked = ProcessHardening.lockMemory()
    // This executable's own mappings: their size and how much of them is resident, in KiB.
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "?"
    let own = mappings().filter { $0.path == executable }
    let mapped = own.reduce(0) { $0 + ($1.fields["Size"] ?? 0) }, resident = own.reduce(0) { $0 + ($1.fields["Rss"] ?? 0) }
    // 4 MiB mapped after locking: nothing of it resident until touched, then all of it locked.
    // Between two inaccessible pages, so that the kernel cannot merge it with a neighbour.
    let size = 4 << 20, page = Int(sysconf(Int32(_SC_PAGESIZE)))
    guard let reserved = mmap(nil, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), reserved != MAP_FAILED,
        mprotect(reserved + page, size, PROT_READ | PROT_WRITE) == 0
    else {
        print("status=-1")
        exit(1)
    }
    let region = reserved + page
    func regionFields() -> [String: Int] { mappings().first { $0.start == UInt(bitPattern: region) }?.fields ?? [:] }
    let untouched = regionFields()
    memset(region, 1, size)
    let touched = regionFields()
    print(
        "status=0\nlocked=\(locked ? 1 : 0) executable-mapped=\(mapped) executable-resident=\(resident)"
            + " untouched-resident=\(untouched["Rss"] ?? -1) touched-resident=\(touched["Rss"] ?? -1) touched-locked=\(touched["Locked"] ?? -1)")
    exit(0)
}
let account = arguments.count > 1 ? arguments[1] : ""
var query: [String: KeychainValue] = ["class": .string("genp"), "svce": .string("probe")]
if operation != "list" { query["acct"] = .string(account) }
let groupIndex = operation.hasPrefix("add") ? 3 : 2
if arguments.count > groupIndex { query["agrp"] = .string(arguments[groupIndex]) }

do {
    let client = try KeychainClient.connect()
    switch operation {
    case "add":
        query["v_Data"] = .data(Data(arguments[2].utf8))
        _ = try client.add(query)
        print("status=0")
    case "add-biometric":
        query["v_Data"] = .data(Data(arguments[2].utf8))
        query["accc"] = .data(try AccessControl(protection: .whenUnlocked, flags: .biometryAny).encoded)
        _ = try client.add(query)
        print("status=0")
    case "find":
        query["r_Data"] = .bool(true)
        query["r_Attributes"] = .bool(true)
        // In a context: an item with an access control is opened as an app would (a finger).
        guard case .dictionary(let item)? = try client.call(Service.CopyMatching(query), in: nil),
            case .string(let group)? = item["agrp"], case .data(let data)? = item["v_Data"]
        else {
            print("status=-26276")
            exit(1)
        }
        print("status=0")
        print("group=\(group)")
        print("data=\(String(decoding: data, as: UTF8.self))")
    case "delete":
        try client.delete(query)
        print("status=0")
    case "list":
        query["r_Attributes"] = .bool(true)
        query["m_Limit"] = .string("m_LimitAll")
        guard case .array(let items)? = try client.copyMatching(query) else {
            print("status=-26276")
            exit(1)
        }
        print("status=0")
        for case .dictionary(let item) in items {
            if case .string(let account)? = item["acct"], case .string(let group)? = item["agrp"] {
                print("\(account)@\(group)")
            }
        }
    default:
        print("status=-50")
        exit(2)
    }
} catch let error as KeychainError {
    print("status=\(error.status)")
    exit(1)
}
