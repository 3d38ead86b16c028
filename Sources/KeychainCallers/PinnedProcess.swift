internal import CSystemShims
public import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// A process pinned by a pidfd. While it runs, its pid names it and nothing else, so what
/// `/proc/PID` says is about it; once it has exited the pid may name another process, and
/// ``isRunning`` says so. Everything a caller is identified by (executable, signature,
/// sandbox, tracer) is read between pinning and a last ``isRunning``.
public struct PinnedProcess: ~Copyable {
    public let pid: Int32
    /// Its user, as the socket or the bus recorded it.
    public let uid: UInt32
    private let pidfd: Int32

    private init(pid: Int32, uid: UInt32, pidfd: Int32) {
        self.pid = pid
        self.uid = uid
        self.pidfd = pidfd
    }

    deinit { close(pidfd) }

    /// Whether the pinned process still runs.
    public var isRunning: Bool { trousseau_pidfd_alive(pidfd) == 1 }

    /// The process at the other end of the connected Unix socket `fd`.
    ///
    /// The kernel's pidfd of the process that connected (`SO_PEERPIDFD`, Linux 6.5+) when it
    /// has one. Older kernels (Debian 12's 6.1) give only the pid (`SO_PEERCRED`): it is
    /// pinned with `pidfd_open`, and refused when the process now holding it started after
    /// `identifiedAt` — it cannot be the one that connected, whose pid was reused. (What
    /// remains there is a reuse between connect and `identifiedAt`, within one clock tick.)
    ///
    /// - Throws: `errSecIO` when the socket's credentials cannot be read;
    ///   `errSecMissingEntitlement` when the process that connected has gone.
    public static func peer(ofConnection fd: Int32, identifiedAt: ProcessStartTime = .now, peerPidfd: Bool = true) throws -> PinnedProcess {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard trousseau_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot read the caller's credentials (SO_PEERCRED): \(String(cString: strerror(errno)))")
        }
        #if TROUSSEAU_TEST_HOOKS
        // Time for a test to end the caller and give its pid to another process.
        if let milliseconds = TestHook.identifyDelay.value.flatMap(UInt32.init) { usleep(milliseconds * 1000) }
        #endif
        if peerPidfd {
            let pidfd = trousseau_peer_pidfd(fd)
            if pidfd >= 0 { return PinnedProcess(pid: pid, uid: uid, pidfd: pidfd) }
            // Older kernels do not know the option; a known option fails only for a peer
            // that has exited and been reaped (EINVAL, ESRCH).
            guard pidfd == -ENOPROTOOPT else { throw gone(pid) }
        }
        guard let process = PinnedProcess(pid: pid, uid: uid), let started = ProcessStartTime(of: pid), started <= identifiedAt, process.isRunning else {
            throw gone(pid)
        }
        return process
    }

    /// Pins process `pid` of user `uid` (a D-Bus peer the bus named), or nil when it has gone.
    public init?(pid: Int32, uid: UInt32) {
        guard pid > 0 else { return nil }
        let pidfd = trousseau_pidfd_open(pid)
        guard pidfd >= 0 else { return nil }
        self.init(pid: pid, uid: uid, pidfd: pidfd)
    }

    /// The refusal of a caller that exited before it was identified.
    public static func gone(_ pid: Int32) -> KeychainError {
        KeychainError(status: OSStatusCode.missingEntitlement, message: "the calling process (pid \(pid)) has gone before it was identified")
    }
}

/// When a process started, in clock ticks since boot (`/proc/PID/stat`'s field 22).
public struct ProcessStartTime: Comparable, Sendable {
    let ticks: UInt64

    /// This moment, in the same unit.
    public static var now: ProcessStartTime {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        let hertz = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessStartTime(ticks: UInt64(time.tv_sec) * hertz + UInt64(time.tv_nsec) * hertz / 1_000_000_000)
    }

    init(ticks: UInt64) { self.ticks = ticks }

    /// The start time of process `pid`, or nil when it cannot be read.
    init?(of pid: Int32) {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces and ')': the
        // fields after it are counted from its last ')'.
        guard let close = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(close + 1)..<count].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state): starttime, field 22, is fields[19].
        guard fields.count > 19, let ticks = UInt64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
        self.ticks = ticks
    }

    public static func < (lhs: ProcessStartTime, rhs: ProcessStartTime) -> Bool { lhs.ticks < rhs.ticks }
}
