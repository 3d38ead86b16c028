import Enclave
import FoundationEssentials
import KeychainModel
import Keybag

// trousseau-enclave --home DIR [--unsafe-fast-kdf]
// Started by the daemon with its end of a socketpair as descriptor 3. Holds the class
// keys; answers the enclave protocol until the daemon closes the connection.

let connection: Int32 = 3
var arguments = CommandLine.arguments.dropFirst()
var home: String?
var configuration = SoftwareKeybag.Configuration()
while let argument = arguments.popFirst() {
    switch argument {
    case "--home": home = arguments.popFirst()
    case "--unsafe-fast-kdf":
        configuration.passcodeKDFTarget = 0
        configuration.minimumLogN = 10
    default: break
    }
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
    while (try? EnclaveFrame.read(from: connection)) ?? nil != nil {
        try? EnclaveFrame.write(EnclaveWire.failure(failure), to: connection)
    }
}
