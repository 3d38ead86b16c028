import CSystemShims
import CodeSigning
import Dispatch
import Enclave
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainServer
import KeychainStore
import KeychainHardening
import KeychainSystem
import KeychainCallers

#if canImport(Glibc)
import Glibc
#endif

// securityd: one per keychain (KEYCHAIN_HOME). Clients start it on demand; a second instance finds the
// daemon lock taken and exits at once. Its options and environment are DaemonManual's (`securityd --help`,
// securityd(8)); a client that starts the
// daemon passes only its TROUSSEAU_ variables (DaemonEnvironment). Test builds also read
// TROUSSEAU_UNSAFE_FAST_KDF=1 (cheap passcode derivation), TROUSSEAU_TEST_ADMIN_TRUST_SETTINGS=FILE
// (the administrator's trust settings, instead of /etc/trousseau/trust-settings), TROUSSEAU_TEST_ENCLAVE_KEY_SEED
// (enclave keys derived from it, for the leak test), TROUSSEAU_TEST_SYSTEM_BUS=ADDRESS (the bus logind's
// PrepareForSleep comes from, instead of the system bus), TROUSSEAU_TEST_PORTAL_EXECUTABLE=PATH (a program the
// Secret Service takes for xdg-desktop-portal) and TROUSSEAU_TEST_SENSOR=DIR
// (a scripted biometric sensor), which release builds do not contain.

ProcessHardening.silenceCrashes()
// Only what DaemonManual documents (and --help prints); anything else is refused, on the
// standard error of whoever typed it.
if let problem = DaemonManual.problem(with: Array(CommandLine.arguments.dropFirst())) {
    var text = "securityd: \(problem)\n" + DaemonManual.usage
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(64)
}
let environment = ProcessInfo.processInfo.environment
// Keep nothing our starter left open (a socket systemd passed is descriptor 3).
let socketActivated = environment["LISTEN_FDS"] == "1" && environment["LISTEN_PID"] == String(getpid())
trousseau_close_from(socketActivated ? 4 : 3)
// Clients start the daemon with standard error on /dev/null; TROUSSEAU_SECURITYD_LOG
// names a file for its diagnostics (and crash reports) instead.
if let log = environment["TROUSSEAU_SECURITYD_LOG"], !log.isEmpty {
    let fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    if fd >= 0 {
        dup2(fd, 2)
        close(fd)
    }
}
// `--home DIR` (what clients pass when they start the daemon) overrides the environment.
let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let system = arguments.contains("--system")
// `--secret-service`: also the freedesktop Secret Service on the session bus (what the D-Bus
// activation file and the user unit start); never idle while the bus lasts.
let secretService = arguments.contains("--secret-service") && !system
let paths: KeychainPaths
if system {
    let defaults = KeychainPaths.system(environment)
    paths = KeychainPaths(home: option("--home") ?? defaults.home, socket: option("--socket") ?? defaults.socket)
} else {
    paths = option("--home").map { KeychainPaths(home: $0, environment: environment) } ?? KeychainPaths.fromEnvironment(environment)
}

if arguments.contains("--help") {
    print(DaemonManual.usage, terminator: "")
    exit(0)
}
if arguments == ["--generate-manual"] {
    print(DaemonManual.page.roff, terminator: "")
    exit(0)
}
if arguments.contains("--version") {
    print(InstallationLayout.versionLine(of: "securityd"))
    exit(0)
}

if arguments.contains("--print-socket") {
    print(paths.socket)  // for the systemd socket unit
    exit(0)
}

/// SIGTERM and SIGINT stop the daemon from the first moment: one that comes while it starts
/// (before it serves, when a supervisor sees its socket appear) stops it as soon as it exists,
/// instead of being lost between ignoring the signal and watching for it.
final class StopSignals {
    private let state = BlockingMutex<(daemon: SecurityDaemon?, reason: String?)>((nil, nil))
    private let sources: [any DispatchSourceSignal]

    init() {
        var sources: [any DispatchSourceSignal] = []
        let state = self.state
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            let name = signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"
            // @Sendable: not main-actor code; it runs on a global queue.
            source.setEventHandler { @Sendable in
                let daemon = state.withLock { current in
                    if current.reason == nil { current.reason = name }
                    return current.daemon
                }
                daemon?.stop(reason: name)
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// From now on a signal stops `daemon`; one that came already stops it now.
    func attach(_ daemon: SecurityDaemon) {
        let reason = state.withLock { current in
            current.daemon = daemon
            return current.reason
        }
        if let reason { daemon.stop(reason: reason) }
    }
}

/// Reports why the daemon cannot serve — in its log and to the client that started it —
/// and exits with status 1.
func fatal(_ error: KeychainError) -> Never {
    DaemonLog.logger.error("cannot serve: \(error.description)")
    DaemonStartFailure(status: error.status, message: error.message).record(for: paths)
    exit(1)
}

let stopSignals = StopSignals()
do {
    DaemonLog.logger.notice("starting for \(paths.home)")  // with the pid: tells daemons of one home apart
    try ProcessHardening.apply()
    try KeychainStore.prepareHome(paths.home)
    guard try DaemonLock.acquire(home: paths.home) else {
        if secretService {
            // Started by the bus while this keychain's daemon runs: that daemon serves it.
            guard let address = SecretServiceHandoff.sessionBusAddress(environment) else {
                fatal(KeychainError(status: OSStatusCode.notAvailable, message: "no session bus in the environment"))
            }
            try SecretServiceHandoff.ask(socket: paths.socket, busAddress: address)
            DaemonLog.logger.notice("another securityd serves \(paths.home); it now serves the Secret Service too")
            exit(0)
        }
        DaemonLog.logger.notice("another securityd serves \(paths.home); exiting")
        exit(0)
    }
    var launch = EnclaveClient.Launch()
    launch.deviceKeyBackend = environment["TROUSSEAU_TPM"]
    #if TROUSSEAU_TEST_HOOKS
    let adminTrustSettings = TestHook.adminTrustSettings.value
    launch.unsafeFastPasscodeKDF = TestHook.unsafeFastKDF.value == "1"
    launch.testSensor = TestHook.sensor.value
    launch.testEnclaveKeySeed = TestHook.enclaveKeySeed.value
    let sleepBus = TestHook.systemBus.value
    #else
    let adminTrustSettings: String? = nil
    let sleepBus: String? = nil
    #endif
    let enclave = try EnclaveClient.launch(home: paths.home, launch)
    let store = try KeychainStore(directory: paths.home, keybag: enclave)
    let listener = try ListeningSocket.open(path: paths.socket, environment: environment, shared: system)
    // No client starts the System keychain's daemon: started by hand it stays; systemd restarts an idle one.
    let idleSeconds = environment["TROUSSEAU_SECURITYD_IDLE_SECONDS"].flatMap { Int($0) } ?? (system && !socketActivated ? 0 : 600)
    let identification = CallerIdentification(
        rootDirectories: [DeveloperRoots.userDirectory(home: paths.home), DeveloperRoots.systemDirectory],
        securityTool: InstallationLayout.securityTool(), keychainAccess: InstallationLayout.keychainAccess(),
        admitsOtherUsers: system)
    let frontEnd = system ? nil : SecretServiceFrontEnd(store: store, identification: identification) { try enclave.unlock(passcode: $0) }
    let dispatcher = try RequestDispatcher(
        store: store, enclave: enclave, home: paths.home, adminTrustSettings: adminTrustSettings,
        scope: system ? .system(owner: geteuid()) : .user, secretService: frontEnd)
    let daemon = SecurityDaemon(
        listener: listener, dispatcher: dispatcher, identification: identification,
        idleExit: idleSeconds > 0 ? .seconds(idleSeconds) : nil)
    frontEnd?.attach(daemon)
    // Serves as long as the session bus does; its end ends the daemon.
    if secretService { try frontEnd?.start(address: nil) }

    stopSignals.attach(daemon)
    // A user's keychains set to lock on sleep do (the System keychain has no password to ask).
    if !system { SleepWatch.start(address: sleepBus) { dispatcher.lockForSleep() } }
    // While sync is on, a round soon after each change here or hint from the server, and one every
    // TROUSSEAU_SYNC_INTERVAL_SECONDS (default 60); 0 leaves only `security sync now`.
    let syncInterval = environment["TROUSSEAU_SYNC_INTERVAL_SECONDS"].flatMap { Int($0) }.map { max($0, 0) } ?? 60
    if !system && syncInterval > 0 { dispatcher.startSync(interval: .seconds(syncInterval)) }
    // TROUSSEAU_SYNC_STALL_SECONDS (default 3600): how long the server's feed may stay short of
    // this device's own acknowledged write before `security sync status` warns of a stall.
    if let stall = environment["TROUSSEAU_SYNC_STALL_SECONDS"].flatMap({ Int($0) }), stall > 0 { dispatcher.warnOfSyncStall(after: stall) }
    DaemonStartFailure.clear(for: paths)  // an earlier daemon's, now out of date
    DaemonLog.logger.notice("serving \(paths.home) on \(paths.socket)")
    daemon.run()
    if listener != 3 { unlink(paths.socket) }
    withExtendedLifetime((stopSignals, store, enclave)) {}
    exit(0)
} catch let error as KeychainError {
    fatal(error)
} catch {
    fatal(KeychainError(status: OSStatusCode.io, message: "\(error)"))
}
