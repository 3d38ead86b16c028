import CSystemShims
import FoundationEssentials
import KeychainModel
import EnclaveBackend
import EnclaveProtocol
import KeychainHardening
import KeychainSystem

// trousseau-enclave --home DIR [--tpm off|auto|TCTI] [--unsafe-fast-kdf] [--test-sensor DIR]
// The last two exist in test builds only: a release build derives passcodes at full cost
// and trusts no scripted sensor, whatever it is told. securityd starts it with no
// environment of its own.
// Started by the daemon with its end of a socketpair as descriptor 3. Holds the class
// keys; answers the enclave protocol until the daemon closes the connection.

ProcessHardening.silenceCrashes()
let connection: Int32 = 3
trousseau_close_from(4)  // only the daemon's socketpair end is ours
var arguments = CommandLine.arguments.dropFirst()
var home: String?
var configuration = SoftwareKeybag.Configuration()
var testSensor: String?
var deviceKeyBackend = DeviceKeyBackend.automatic
while let argument = arguments.popFirst() {
    switch argument {
    case "--home": home = arguments.popFirst()
    case "--tpm":
        deviceKeyBackend = DeviceKeyBackend(setting: arguments.popFirst())
        configuration.deviceKeyBackend = deviceKeyBackend
    #if TROUSSEAU_TEST_HOOKS
    case "--unsafe-fast-kdf":
        configuration.passcodeKDFTarget = 0
        configuration.minimumLogN = 10
        configuration.backupKDFTarget = 0
        configuration.minimumBackupLogN = 10
    case "--test-sensor":
        if let directory = arguments.popFirst() { testSensor = directory }
    case "--test-enclave-key-seed":
        configuration.testEnclaveKeySeed = arguments.popFirst().map { Data($0.utf8) }
    #endif
    default: break
    }
}

// The sensor the enclave trusts: fprintd when it is installed (or, in a test build told
// so, a scripted one).
configuration.biometricSensor = FprintdSensor.installed()
#if TROUSSEAU_TEST_HOOKS
if let testSensor { configuration.biometricSensor = TestSensor(directory: testSensor) }
#endif

let memoryLocked: Bool
do {
    try ProcessHardening.apply()
    // Before any key is read: the lock takes pages as they are touched (MCL_ONFAULT), so a
    // page that held a key before this call could already have been swapped out.
    memoryLocked = ProcessHardening.lockMemory()
    guard let home else { throw KeychainError.param("trousseau-enclave needs --home DIR") }
    let keybag = try SoftwareKeybag(directory: home, deviceKey: deviceKeyBackend.open(directory: home), configuration: configuration)
    EnclaveServer(keybag: keybag, memoryLocked: memoryLocked).serve(fd: connection)
} catch {
    // Answer every request with the reason, so the daemon reports it as an OSStatus. A TPM
    // that does not answer may come back: answer once and exit, so that the daemon's next
    // request starts an enclave that tries again.
    let failure = error as? KeychainError ?? KeychainError.internalComponent
    while (try? FrameIO.read(from: connection, maximumSize: EnclaveWire.maximumFrameSize)) ?? nil != nil {
        try? FrameIO.write(EnclaveWire.failure(failure), to: connection)
        if failure.status == OSStatusCode.notAvailable { break }
    }
}
