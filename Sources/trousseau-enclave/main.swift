import CSystemShims
import Enclave
import FoundationEssentials
import KeychainModel
import Keybag

// trousseau-enclave --home DIR [--unsafe-fast-kdf]
// Environment: TROUSSEAU_TEST_SENSOR=DIR trusts the scripted TestSensor in DIR (tests only).
// Started by the daemon with its end of a socketpair as descriptor 3. Holds the class
// keys; answers the enclave protocol until the daemon closes the connection.

ProcessHardening.silenceCrashes()
let connection: Int32 = 3
trousseau_close_from(4)  // only the daemon's socketpair end is ours
var arguments = CommandLine.arguments.dropFirst()
var home: String?
var configuration = SoftwareKeybag.Configuration()
while let argument = arguments.popFirst() {
    switch argument {
    case "--home": home = arguments.popFirst()
    case "--unsafe-fast-kdf":
        configuration.passcodeKDFTarget = 0
        configuration.minimumLogN = 10
        configuration.backupKDFTarget = 0
        configuration.minimumBackupLogN = 10
    default: break
    }
}

// The sensor the enclave trusts: a scripted one only when configured for tests, else
// fprintd when it is installed.
if let directory = ProcessInfo.processInfo.environment["TROUSSEAU_TEST_SENSOR"], !directory.isEmpty {
    configuration.biometricSensor = TestSensor(directory: directory)
} else {
    configuration.biometricSensor = FprintdSensor.installed()
}

let memoryLocked: Bool
do {
    try ProcessHardening.apply()
    memoryLocked = ProcessHardening.lockMemory()
    guard let home else { throw KeychainError.param("trousseau-enclave needs --home DIR") }
    let keybag = try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home), configuration: configuration)
    EnclaveServer(keybag: keybag, memoryLocked: memoryLocked).serve(fd: connection)
} catch {
    // Answer every request with the reason, so the daemon reports it as an OSStatus.
    let failure = error as? KeychainError ?? KeychainError.internalComponent
    while (try? FrameIO.read(from: connection, maximumSize: EnclaveWire.maximumFrameSize)) ?? nil != nil {
        try? FrameIO.write(EnclaveWire.failure(failure), to: connection)
    }
}
