import CSystemShims
import KeychainHardening
import KeychainModel
import KeychainSystem
import SyncNetwork

#if canImport(Glibc)
import Glibc
#endif

// trousseau-sync-agent: the keychain's one process that speaks to the network. securityd
// starts it while sync is on, with its end of a socketpair as descriptor 3 and no
// environment, and sends it HTTP requests for the sync server (each with its Authorization
// header) and the hint socket to keep; it answers each request and passes on each hint, and
// exits when securityd closes the connection. It holds no key; it is non-dumpable all the
// same, since the headers it holds are the device's credential.

/// A line on standard error (securityd's, so its log).
@Sendable func report(_ line: String) {
    var text = "trousseau-sync-agent[\(getpid())]: \(line)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

ProcessHardening.silenceCrashes()
trousseau_close_from(4)  // only securityd's socketpair end is ours
do {
    try ProcessHardening.apply()
} catch {
    report((error as? KeychainError)?.message ?? "\(error)")
    exit(1)
}
SyncAgentServer(fd: 3, log: report).serve()
exit(0)
