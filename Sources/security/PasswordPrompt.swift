import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads a password the way macOS's `security` does: on a terminal, after a prompt on
/// standard error with echo off; otherwise one line of standard input, without a prompt.
enum PasswordPrompt {
    static func read(_ prompt: String) -> SecretBytes {
        let terminal = isatty(STDIN_FILENO) == 1
        var saved = termios()
        if terminal {
            writeToStandardError(prompt)
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        defer {
            if terminal {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                writeToStandardError("\n")
            }
        }
        var line: [UInt8] = []
        defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        var byte: UInt8 = 0
        while Glibc.read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return SecretBytes(line)
    }
}
