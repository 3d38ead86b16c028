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
    /// A field of /proc/self/status, in KiB.
    func status(_ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    let locked = ProcessHardening.lockMemory()
    // This executable's own mappings: their size and how much of them is resident, in KiB.
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var mapped = 0, resident = 0, inExecutable = false
    for line in ((try? String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)) ?? "").split(separator: "\n") {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        if let range = words.first, range.contains("-"), words.count >= 5, !range.hasSuffix(":") {
            inExecutable = words.count >= 6 && String(words[5]) == executable
        } else if inExecutable, words.count >= 2, words[0] == "Size:" {
            mapped += Int(words[1]) ?? 0
        } else if inExecutable, words.count >= 2, words[0] == "Rss:" {
            resident += Int(words[1]) ?? 0
        }
    }
    let before = status("VmLck")
    // 4 MiB touched after locking: locked as it is faulted in.
    let size = 4 << 20
    let region = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
    memset(region, 1, size)
    print("status=0\nlocked=\(locked ? 1 : 0) executable-mapped=\(mapped) executable-resident=\(resident) locked-growth=\(status("VmLck") - before)")
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
