import KeychainClient
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Reads a password the way macOS's `security` does: on a terminal, after a prompt on
/// standard error with echo off; otherwise one line of standard input, without a prompt.
///
/// Standard input is read a byte at a time, unbuffered, so that in `security -i` a
/// password line and the command lines around it are read in order.
enum PasswordPrompt {
    /// The line read, or nil at the end of input.
    static func read(_ prompt: String) -> SecretBytes? {
        let line = TerminalInput.readSecret(from: STDIN_FILENO) { ToolOutput.error(prompt) }
        if isatty(STDIN_FILENO) == 1 { ToolOutput.error("\n") }
        return line
    }
}
