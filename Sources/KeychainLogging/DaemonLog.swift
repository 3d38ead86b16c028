import Logging

/// securityd's log (swift-log, through ``JournalLogHandler``): on standard error, which is
/// the journal under systemd, a file when `TROUSSEAU_SECURITYD_LOG` names one, else
/// /dev/null. Levels: refusals and tampering are warnings, start and stop notices, the
/// rest information. Messages name pids, executables and OSStatus codes, never a query,
/// an account, a service or a secret.
public enum DaemonLog {
    public static let logger = Logger(label: "securityd") { JournalLogHandler(label: $0) }
}
