import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol

/// `security import-keyring`: moving in from gnome-keyring. The keyring file's items (its
/// labels, attributes, secrets and dates) become Secret Service items that the programs which
/// stored them find again through the Secret Service.
enum KeyringCommands {
    static let usage = """
        [-p password | --password-stdin] file
            Import the items of a gnome-keyring keyring file (~/.local/share/keyrings/login.keyring:
            gnome-keyring's format, or libsecret's file backend's) into the Secret Service's
            items of this keychain, with the keyring's password (asked for when not given;
            --password-stdin reads one line of standard input). An item already here with the
            same attributes is kept, or updated when the file's copy is newer.
        """

    static func importKeyring(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard
            let parsed = try? OptionParser("hp:", longOptions: ["password-stdin": false]).parse(arguments.dropFirst()),
            parsed.operands.count == 1
        else { return ToolCommand.showUsage }
        let path = parsed.operands[0]
        guard let file = FileManager.default.contents(atPath: path) else {
            ToolOutput.report("import-keyring", KeychainError(status: .io, message: "cannot read \(path)"))
            return 1
        }
        let password: SecretBytes
        if let given = parsed.options.last(where: { $0.name == "p" })?.value {
            password = SecretBytes(Array(given.utf8))
        } else if let read = PasswordPrompt.read("password for \(path): ") {
            password = read
        } else {
            ToolOutput.report("import-keyring", KeychainError(status: .authFailed, message: "no password was given"))
            return OSStatusCode.authFailed.rawValue
        }
        do throws(KeychainError) {
            let report = try session.call(Service.ImportKeyring(file: file, password: password), purpose: "import a keyring")
            let name = report.label.isEmpty ? "" : " (\(report.label))"
            ToolOutput.print("\(path)\(name): \(report.imported) imported, \(report.updated) updated, \(report.unchanged) already here\n")
            return 0
        } catch {
            ToolOutput.report("import-keyring", error)
            return error.status.rawValue
        }
    }
}
