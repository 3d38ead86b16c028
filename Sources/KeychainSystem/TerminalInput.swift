public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Lines read a byte at a time, unbuffered, so that whoever reads the same descriptor
/// next (`security -i`'s next command) finds the rest in order.
public enum TerminalInput {
    /// A secret line from `fd`: on a terminal, after `prompt` and with echo off.
    ///
    /// - Returns: the line, or nil at the end of input.
    public static func readSecret(from fd: Int32, prompt: () -> Void) -> SecretBytes? {
        let terminal = isatty(fd) == 1
        var saved = termios()
        if terminal {
            prompt()
            tcgetattr(fd, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer {
            if terminal { tcsetattr(fd, TCSAFLUSH, &saved) }
        }
        var line: [UInt8] = []
        defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard readLine(from: fd, into: &line) else { return nil }
        return SecretBytes(line)
    }

    /// Appends the next line (without its line ending) to `line`; false at the end of
    /// input with nothing read.
    public static func readLine(from fd: Int32, into line: inout [UInt8]) -> Bool {
        var byte: UInt8 = 0
        var sawAny = false
        while true {
            let count = Glibc.read(fd, &byte, 1)
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
