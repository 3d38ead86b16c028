import CSystemShims
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Hardening for a process that holds keys: no core dumps (which would hold them in
/// plaintext) and no ptrace attach or /proc/PID/mem reads by other processes of the user.
public enum ProcessHardening {
    /// Makes this process non-dumpable, sets its core-file limit to zero and ignores SIGXFSZ.
    ///
    /// - Throws: `errSecInternalComponent` when the kernel refuses.
    public static func apply() throws {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        guard trousseau_set_nondumpable() == 0, setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0 else {
            throw KeychainError(status: OSStatusCode.internalComponent,
                                message: "cannot make the process non-dumpable: \(SystemCall.describe(errno))")
        }
        // Over a file-size limit (RLIMIT_FSZ) a write fails with EFBIG, which the store
        // reports as errSecDiskFull, instead of the signal killing the process.
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Locks this process's memory, now and future, into RAM so keys are never swapped out —
    /// when the memory-lock limit allows it (unlimited, at least 256 MiB, or root). With a
    /// smaller limit, later allocations would fail, so memory is left unlocked.
    ///
    /// Pages are locked as they are first touched (`MCL_ONFAULT`, Linux 4.4): a page that
    /// holds a key was touched to hold it, so none can be swapped out, and the code of the
    /// libraries the process maps but never runs is not read in and pinned (with
    /// `MCL_CURRENT` alone the enclave's every mapped page was resident: 34.9 MiB).
    ///
    /// - Returns: whether memory is locked.
    public static func lockMemory() -> Bool {
        // A sanitizer's shadow memory is terabytes of reserved address space: locking it
        // all (MCL_FUTURE) would fail or exhaust RAM. Sanitized builds are test builds.
        guard !isSanitized else { return false }
        var limit = rlimit()
        let resource = __rlimit_resource_t(8)  // RLIMIT_MEMLOCK: a macro alias Swift does not import
        guard getrlimit(resource, &limit) == 0 else { return false }
        let infinity = rlim_t.max  // RLIM_INFINITY, which Swift imports as an overflowing literal
        if limit.rlim_cur != infinity, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &limit)
        }
        let enough = geteuid() == 0 || limit.rlim_cur == infinity || limit.rlim_cur >= 256 << 20
        guard enough else { return false }
        if mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0 { return true }
        // A kernel older than 4.4 refuses the flag (EINVAL): lock everything now.
        return errno == EINVAL && mlockall(MCL_CURRENT | MCL_FUTURE) == 0
    }

    /// Makes a crash end the process without a report: the Swift runtime's backtracer
    /// prints every register and the 16 bytes each one points at, which in a process that
    /// holds keys may be a key. With the default action, the kernel ends the process and
    /// writes no core file (``apply()``). Also unblocks every signal: a spawner's signal
    /// mask survives exec, and a dispatch worker thread (clients spawn daemons from them)
    /// blocks SIGABRT, SIGHUP and most others.
    public static func silenceCrashes() {
        for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS] {
            signal(crash, SIG_DFL)
        }
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
    }

    /// Whether this process runs under AddressSanitizer or ThreadSanitizer (their runtimes
    /// define these symbols).
    public static var isSanitized: Bool {
        dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
    }

    /// Whether the kernel would dump this process's memory (PR_GET_DUMPABLE).
    public static var isDumpable: Bool {
        trousseau_get_dumpable() != 0
    }
}
