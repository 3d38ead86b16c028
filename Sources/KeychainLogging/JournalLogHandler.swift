import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A swift-log backend for Trousseau's daemons: one line per message on standard error,
/// which systemd's journal reads with its priority when the line starts with `<N>`
/// (sd-daemon(3)'s prefixes, syslog's numbers).
///
/// The prefix is written only when standard error *is* the journal's stream — the device
/// and inode in `JOURNAL_STREAM` (systemd.exec(5)) match descriptor 2's — so a terminal or
/// a log file gets plain `label[pid]: message` lines instead. Messages name pids,
/// executables and OSStatus codes, never a query, an account, a service or a secret.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let toJournal: Bool

    /// - Parameter standardErrorIsTheJournal: whether to write priority prefixes (default:
    ///   whether `JOURNAL_STREAM` names descriptor 2 now).
    public init(label: String, standardErrorIsTheJournal: Bool = JournalLogHandler.standardErrorIsTheJournal()) {
        self.label = label
        self.toJournal = standardErrorIsTheJournal
        // A daemon a client started writes to /dev/null: nothing below critical is even
        // formatted there (a refusal would otherwise pay for a line nobody reads).
        if Self.standardErrorIsNull() { logLevel = .critical }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var text = event.message.description
        if !metadata.isEmpty || event.metadata?.isEmpty == false {
            let fields = metadata.merging(event.metadata ?? [:]) { _, new in new }
            for key in fields.keys.sorted() { text += " \(key)=\(fields[key]!)" }
        }
        // One entry per message: a line break would start another at the default priority.
        // (By byte: a refusal logs on the request's path, and walking Characters costs µs.)
        if text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
            text = String(decoding: text.utf8.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
        }
        var line = toJournal ? "<\(Self.priority(event.level))>" : "\(label)[\(getpid())]: "
        line.reserveCapacity(line.utf8.count + text.utf8.count + 1)
        line += text
        line += "\n"
        line.withUTF8 { bytes in
            var written = 0
            while written < bytes.count {
                let result = write(2, bytes.baseAddress! + written, bytes.count - written)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return }
                written += result
            }
        }
    }

    /// syslog's priority for a swift-log level (journalctl's `-p`: 4 is warning).
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether descriptor 2 is /dev/null (the same character device).
    static func standardErrorIsNull() -> Bool {
        var error = stat(), null = stat()
        guard fstat(2, &error) == 0, stat("/dev/null", &null) == 0 else { return false }
        return error.st_mode & S_IFMT == S_IFCHR && error.st_rdev == null.st_rdev
    }

    /// Whether descriptor 2 is the stream systemd connected to the journal: `JOURNAL_STREAM`
    /// is `DEVICE:INODE` in decimal, and a redirection (a log file, a terminal) changes them.
    public static func standardErrorIsTheJournal(_ value: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
