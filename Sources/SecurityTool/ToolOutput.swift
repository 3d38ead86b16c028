import FoundationEssentials
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Standard output and error as macOS's `security` writes them through C stdio: output is
/// buffered (a line at a time on a terminal) until the command ends, errors are written at
/// once — so `2>&1` interleaves the two as it does on macOS.
enum ToolOutput {
    private static let pending = BlockingMutex<[UInt8]>([])
    private static let lineBuffered = isatty(STDOUT_FILENO) == 1

    static func print(_ text: String) {
        print(bytes: Array(text.utf8))
    }

    /// Bytes that need not be UTF-8, written as they are.
    static func print(bytes: [UInt8]) {
        pending.withLock { $0.append(contentsOf: bytes) }
        if lineBuffered, bytes.contains(UInt8(ascii: "\n")) { flush() }
    }

    static func error(_ text: String) {
        _ = write(Array(text.utf8), to: STDERR_FILENO)
    }

    /// Writes what is buffered for standard output.
    static func flush() {
        let bytes = pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        _ = write(bytes, to: STDOUT_FILENO)
    }

    /// Writes all of `bytes` to `fd`, retrying interrupted and short writes; false (errno
    /// set) when a write fails.
    static func write<Bytes: ContiguousBytes>(_ bytes: Bytes, to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
    }

    /// `security: <message>` on standard error, as the tool's `sec_error` writes it.
    static func report(_ message: String) {
        error("security: \(message)\n")
    }

    /// `security: <function>: <Apple's message for status>`, as `sec_perror` writes it.
    static func report(_ function: String, status: OSStatusCode) {
        report("\(function): \(KeychainError.appleMessage(for: status))")
        if debugging, status != .success { error("detail: OSStatus \(status.rawValue)\n") }
    }

    /// The same for a failed keychain call: the error's status, and with TROUSSEAU_DEBUG
    /// set, the daemon's detail (which names keys and types, never values).
    static func report(_ function: String, _ error: KeychainError) {
        report("\(function): \(KeychainError.appleMessage(for: error.status))")
        if debugging {
            self.error("detail: \(error.message)\n")
        } else if error.status == .notAvailable, !error.message.isEmpty {
            // Why there is no keychain (no securityd installed, or it could not start) is
            // what the user needs to act on; Apple's words alone say to restart the computer.
            report(error.message)
        }
    }

    /// Reports a failed command's error and returns its status (the exit status's source).
    static func failure(_ function: String, _ error: any Error) -> Int32 {
        let failure = KeychainError.from(error)
        report(function, failure)
        return failure.status.rawValue
    }

    private static var debugging: Bool { getenv("TROUSSEAU_DEBUG") != nil }
}

extension KeychainError {
    /// Any error of a keychain call as a KeychainError (an unexpected one as an internal
    /// component failure).
    static func from(_ error: any Error) -> KeychainError {
        error as? KeychainError ?? KeychainError.internalComponent
    }
}
