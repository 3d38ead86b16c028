import Foundation
import KeychainTestSupport

extension SessionBus {
    /// Runs a Python program (Debian's python, where keyring, secretstorage and jeepney are)
    /// with `SecretServiceClients.python` importable as `client`.
    ///
    /// - Parameters:
    ///   - interpreter: another Python executable (a signed copy).
    ///   - sandbox: the command line that runs it (bwrap's, for a Flatpak app).
    func python(_ script: String, _ arguments: [String] = [], interpreter: String = "/usr/bin/python3", sandbox: [String] = []) throws -> CommandResult {
        let helper = directory + "/client.py"
        if !FileManager.default.fileExists(atPath: helper) {
            try SecretServiceClients.python.write(toFile: helper, atomically: true, encoding: .utf8)
        }
        var environment = clientEnvironment
        environment["PYTHONPATH"] = directory
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let command = sandbox + [interpreter, "-c", script] + arguments
        return try CommandRunner.run(executable: command[0], Array(command.dropFirst()), environment: environment, clearing: true)
    }
}
