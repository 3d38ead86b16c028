import CSystemShims
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Hardening for a process that holds keys: no core dumps (which would hold them in
/// plaintext) and no ptrace attach or /proc/PID/mem reads by other processes of the user.
public enum ProcessHardening {
    /// Makes this process non-dumpable and sets its core-file limit to zero.
    ///
    /// - Throws: `errSecInternalComponent` when the kernel refuses.
    public static func apply() throws {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        guard trousseau_set_nondumpable() == 0, setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0 else {
            throw KeychainError(status: OSStatusCode.internalComponent,
                                message: "cannot make the process non-dumpable: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether the kernel would dump this process's memory (PR_GET_DUMPABLE).
    public static var isDumpable: Bool {
        trousseau_get_dumpable() != 0
    }
}
