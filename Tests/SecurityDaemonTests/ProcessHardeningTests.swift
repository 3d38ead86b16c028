import Foundation
import KeychainTestSupport
import Testing

/// ProcessHardening in a fresh process of its own (keychain-probe harden), so that what an
/// earlier test did to the test process cannot make it pass.
@Suite struct ProcessHardeningTests {
    @Test func hardeningMakesAFreshProcessNonDumpableWithoutCoreFiles() throws {
        let result = try CommandRunner.run("keychain-probe", ["harden"])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(lines.contains("before dumpable=1 core=\(Self.inheritedCoreLimit)"), "\(lines)")
        #expect(lines.contains("after dumpable=0 core=0"), "\(lines)")
    }

    /// The enclave's memory lock pins what the process touches, now and later, and not the
    /// code it maps and never runs: with `MCL_CURRENT` every mapped page was read in and locked.
    @Test(.enabled(if: ProcessHardeningTests.mayLockMemory && !ProcessHardeningTests.sanitized, "locking needs CAP_IPC_LOCK or a memory-lock limit of 256 MiB, and no sanitizer"))
    func lockingMemoryPinsTouchedPagesOnly() throws {
        let result = try CommandRunner.run("keychain-probe", ["lock-memory"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        var fields: [String: Int] = [:]
        for word in result.stdout.split(whereSeparator: \.isWhitespace) {
            let pair = word.split(separator: "=")
            if pair.count == 2, let value = Int(pair[1]) { fields[String(pair[0])] = value }
        }
        #expect(fields["locked"] == 1, "\(result.stdout)")
        let mapped = try #require(fields["executable-mapped"]), resident = try #require(fields["executable-resident"])
        #expect(mapped > 0 && resident * 2 < mapped, "\(resident) of \(mapped) KiB of the executable resident")
        // Locked as touched: nothing of a fresh mapping is read in by the lock, all of it is
        // locked once written.
        #expect(fields["untouched-resident"] == 0, "\(result.stdout)")
        #expect(fields["touched-resident"] == 4096 && fields["touched-locked"] == 4096, "\(result.stdout)")
    }

    /// Whether a child of this process can lock its memory: it has CAP_IPC_LOCK (root outside
    /// a container that drops it), or a memory-lock limit of at least 256 MiB.
    static var mayLockMemory: Bool {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let capabilities = status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }?.split(separator: "\t").last
        if let capabilities, let bits = UInt64(capabilities.trimmingCharacters(in: .whitespaces), radix: 16), bits & (1 << 14) != 0 { return true }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(8), &limit)  // RLIMIT_MEMLOCK
        return limit.rlim_max == rlim_t.max || limit.rlim_max >= 256 << 20
    }

    /// Sanitized builds (scripts/reliability) never lock memory: their shadow is terabytes.
    static let sanitized = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

    /// The core-file limit a child inherits from this process.
    static var inheritedCoreLimit: UInt {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        return UInt(limit.rlim_cur)
    }
}
