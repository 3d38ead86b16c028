public import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// The one place system calls' failures become ``KeychainError``s: errno's text, retries
/// on EINTR.
public enum SystemCall {
    /// The system's text for `code` (strerror).
    public static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `errSecIO` for a failed call: "what: reason".
    public static func ioError(_ what: String, errno code: Int32 = errno) -> KeychainError {
        KeychainError(status: OSStatusCode.io, message: "\(what): \(describe(code))")
    }

    /// Calls `body` until it fails with something other than EINTR or succeeds; a negative
    /// result throws ``ioError(_:errno:)`` for `what`.
    @discardableResult
    public static func retrying<Result: BinaryInteger>(_ what: @autoclosure () -> String, _ body: () -> Result) throws -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno != EINTR { throw ioError(what()) }
        }
    }

    /// Waits for `child` to exit (retrying on EINTR); its raw wait status, or nil when it is
    /// not our child.
    @discardableResult
    public static func wait(_ child: pid_t, options: Int32 = 0) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(child, &status, options)
            if result == child { return status }
            if result < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// The exit status in a raw wait status: the code, or 128 + the signal that ended it.
    public static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
    }
}
