#if TROUSSEAU_TEST_HOOKS
#if canImport(Glibc)
import Glibc
#endif

/// Every test hook: a variable of securityd's or the enclave's environment that a debug
/// (test) build obeys. Release builds contain none of them — not the type, not a name
/// (InstallationTests checks the installed programs for each `rawValue` and
/// ``enclaveFlags``). A client passes a hook to a daemon it starts only when the test names
/// it explicitly (`DaemonEnvironment`).
public enum TestHook: String, CaseIterable, Sendable {
    /// "1": passcodes derived with cheap parameters (the enclave's `--unsafe-fast-kdf`).
    case unsafeFastKDF = "TROUSSEAU_UNSAFE_FAST_KDF"
    /// A scripted biometric sensor's file (the enclave's `--test-sensor`).
    case sensor = "TROUSSEAU_TEST_SENSOR"
    /// The administrator's trust settings file, instead of the system's.
    case adminTrustSettings = "TROUSSEAU_TEST_ADMIN_TRUST_SETTINGS"
    /// A seed enclave keys are derived from, so a test knows their private scalars.
    case enclaveKeySeed = "TROUSSEAU_TEST_ENCLAVE_KEY_SEED"
    /// The bus logind's PrepareForSleep comes from, instead of the system bus.
    case systemBus = "TROUSSEAU_TEST_SYSTEM_BUS"
    /// Another program the Secret Service treats as xdg-desktop-portal.
    case portalExecutable = "TROUSSEAU_TEST_PORTAL_EXECUTABLE"
    /// Milliseconds securityd waits between reading a caller's credentials and pinning it.
    case identifyDelay = "TROUSSEAU_TEST_IDENTIFY_DELAY_MS"
    /// "1": callers pinned as on kernels without SO_PEERPIDFD (pidfd_open and start time).
    case noPeerPidfd = "TROUSSEAU_TEST_NO_PEER_PIDFD"

    /// The enclave's command-line flags that carry hooks.
    public static let enclaveFlags = ["--unsafe-fast-kdf", "--test-sensor", "--test-enclave-key-seed"]

    /// The hook's value in this process's environment; nil when unset or empty.
    public var value: String? {
        guard let raw = getenv(rawValue), raw.pointee != 0 else { return nil }
        return String(cString: raw)
    }
}
#endif
