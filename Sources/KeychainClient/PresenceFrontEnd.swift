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
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw KeychainError(status: OSStatusCode.io, message: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let words: [String] = [agent, secret.rawValue, prompt]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, agent, &actions, nil, argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else {
            throw KeychainError(status: OSStatusCode.interactionNotAllowed, message: "cannot run the passcode agent \(agent)")
        }
        var line: [UInt8] = []
        defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        let answered = TerminalInput.readLine(from: fds[0], into: &line)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard answered, status == 0 else {
            throw KeychainError(status: OSStatusCode.userCanceled, message: "the user cancelled the \(secret.rawValue) prompt")
        }
        return SecretBytes(line)
    }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
    }
}
