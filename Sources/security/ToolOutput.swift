import KeychainModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Standard output and error as macOS's `security` writes them through C stdio: output is
/// buffered (a line at a time on a terminal) until the command ends, errors are written at
/// once — so `2>&1` interleaves the two as it does on macOS.
enum ToolOutput {
    private static let pending = Mutex<[UInt8]>([])
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
        write(STDERR_FILENO, Array(text.utf8))
    }

    /// Writes what is buffered for standard output.
    static func flush() {
        let bytes = pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        write(STDOUT_FILENO, bytes)
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }

    /// `security: <message>` on standard error, as the tool's `sec_error` writes it.
    static func report(_ message: String) {
        error("security: \(message)\n")
    }

    /// `security: <function>: <Apple's message for status>`, as `sec_perror` writes it.
    static func report(_ function: String, status: Int32) {
        report("\(function): \(KeychainError.appleMessage(for: status))")
        if debugging, status != OSStatusCode.success { error("detail: OSStatus \(status)\n") }
    }

    /// The same for a failed keychain call: the error's status, and with TROUSSEAU_DEBUG
    /// set, the daemon's detail (which names keys and types, never values).
    static func report(_ function: String, _ error: KeychainError) {
        report("\(function): \(KeychainError.appleMessage(for: error.status))")
        if debugging { self.error("detail: \(error.message)\n") }
    }

    private static var debugging: Bool { getenv("TROUSSEAU_DEBUG") != nil }
}

extension KeychainError {
    /// Any error of a keychain call as a KeychainError (an unexpected one as an internal
    /// component failure).
    static func from(_ error: any Error) -> KeychainError {
        error as? KeychainError ?? KeychainError(status: OSStatusCode.internalComponent)
    }
}
