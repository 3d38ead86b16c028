import FoundationEssentials
public import KeychainModel


#if canImport(Glibc)
import Glibc
#endif

/// Where the user types the keychain passcode or an application password when an item
/// asks for it: the program `TROUSSEAU_PASSCODE_AGENT` names (like pinentry), else the
/// controlling terminal. The enclave checks what is typed; this only collects it.
///
/// The agent is run as `AGENT passcode|application-password PROMPT`; it prints the value
/// on one line and exits 0, or exits non-zero when the user cancels.
public struct PresenceFrontEnd: Sendable {
    /// What is asked for.
    public enum Secret: String, Sendable {
        case passcode
        case applicationPassword = "application-password"
    }

    public let agent: String?

    public init(agent: String? = ProcessInfo.processInfo.environment["TROUSSEAU_PASSCODE_AGENT"]) {
        self.agent = agent.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Asks the user for `secret`.
    ///
    /// - Throws: `errSecUserCanceled` when the user cancels; `errSecInteractionNotAllowed`
    ///   with no agent and no terminal.
    public func ask(for secret: Secret, prompt: String) throws -> SecretBytes {
        if let agent { return try ask(agent, secret, prompt) }
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard terminal >= 0 else {
            throw KeychainError(
                status: OSStatusCode.interactionNotAllowed, message: "no terminal to ask for the \(secret.rawValue) on")
        }
        defer { close(terminal) }
        let line = TerminalInput.readSecret(from: terminal) { Self.write("\(prompt): ", to: terminal) }
        Self.write("\n", to: terminal)
        guard let line else { throw KeychainError(status: OSStatusCode.userCanceled, message: "nothing was typed") }
        return line
    }

    private func ask(_ agent: String, _ secret: Secret, _ prompt: String) throws -> SecretBytes {
        // The agent runs as any program the user starts would (this process's environment).
        let (status, line) = try Spawn.capturingOutput(
            agent, arguments: [secret.rawValue, prompt], environment: ProcessInfo.processInfo.environment,
            failure: OSStatusCode.interactionNotAllowed
        ) { fd -> SecretBytes? in
            var line: [UInt8] = []
            defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            return TerminalInput.readLine(from: fd, into: &line) ? SecretBytes(line) : nil
        }
        guard let line, status == 0 else {
            throw KeychainError(status: OSStatusCode.userCanceled, message: "the user cancelled the \(secret.rawValue) prompt")
        }
        return line
    }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
    }
}
