import KeychainModel

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
        let terminal = isatty(STDIN_FILENO) == 1
        var saved = termios()
        if terminal {
            ToolOutput.error(prompt)
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        defer {
            if terminal {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                ToolOutput.error("\n")
            }
        }
        var line: [UInt8] = []
        defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard StandardInput.readLine(into: &line) else { return nil }
        return SecretBytes(line)
    }
}

/// Standard input, one line at a time, unbuffered.
enum StandardInput {
    /// Appends the next line (without its line ending) to `line`; false at the end of
    /// input with nothing read.
    static func readLine(into line: inout [UInt8]) -> Bool {
        var byte: UInt8 = 0
        var sawAny = false
        while true {
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { break }
            sawAny = true
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return sawAny
    }
}
