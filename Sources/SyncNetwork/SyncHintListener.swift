import FoundationEssentials
import HummingbirdWSClient
public import KeychainModel
import Logging
public import SyncProtocol

/// Keeps a WebSocket open on the server's `GET /v1/notify` and reports each change hint, so
/// a device pulls within a round trip of another device's write instead of at its next
/// timed round. A hint carries no record and the socket is only a shortcut: every
/// subscription (the first, and each after a reconnect) is reported too, because writes
/// made while the socket was down were not hinted; the timed rounds stay the fallback.
///
/// The device's credential is used only in the `Authorization` header. A lost socket is
/// opened again after 1 s, doubling to 60 s while it keeps failing.
public final class SyncHintListener: Sendable {
    private let task: BlockingMutex<Task<Void, Never>?> = BlockingMutex(nil)
    private let url: String
    private let authorization: SecretBytes
    private let changed: @Sendable (ChangeHint) -> Void
    private let log: @Sendable (String) -> Void

    /// Hints are small JSON objects; anything longer is not one.
    static let maximumMessage = 4096

    /// - Parameters:
    ///   - url: the server's `/v1/notify` (`http://` or `https://`).
    ///   - authorization: the `Authorization` header's value.
    ///   - changed: called with ``ChangeHint/subscribed`` on each subscription and with each
    ///     hint (from a concurrency pool thread: it must return at once).
    public init(
        url: String, authorization: SecretBytes, log: @escaping @Sendable (String) -> Void, changed: @escaping @Sendable (ChangeHint) -> Void
    ) {
        self.url = url
        self.authorization = authorization
        self.changed = changed
        self.log = log
    }

    deinit { stop() }

    /// Opens the socket and keeps it open until ``stop()``.
    public func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task.detached { [self] in await keepListening() }
        }
    }

    /// Closes the socket; no hint is reported after this returns.
    public func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    private func keepListening() async {
        var delay = 1
        var lastFailure: String?
        while !Task.isCancelled {
            do {
                let subscribed = try await listenOnce()
                if subscribed { delay = 1 }
                lastFailure = nil
            } catch is CancellationError {
                return
            } catch {
                // One line per change of cause, not one per retry.
                let failure = Self.describe(error)
                if failure != lastFailure { log("the hint socket failed (\(failure)); rounds still run on their timer") }
                lastFailure = failure
            }
            guard !Task.isCancelled else { return }
            try? await Task.sleep(for: .seconds(delay))
            delay = min(delay * 2, 60)
        }
    }

    /// One connection, until it closes; whether it got as far as its subscription.
    private func listenOnce() async throws -> Bool {
        let header = authorization.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: Self.maximumMessage, additionalHeaders: [.authorization: header],
            autoPing: .enabled(timePeriod: .seconds(30)), validateUTF8: true)
        let subscribed = BlockingMutex(false)
        let changed = changed
        var logger = Logger(label: "trousseau.sync.hints")
        logger.logLevel = .critical
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: Self.maximumMessage) {
                // Anything but a hint is ignored: the socket only ever prompts a pull.
                guard case .text(let text) = message, let hint = try? JSONDecoder().decode(ChangeHint.self, from: Data(text.utf8)) else { continue }
                if hint == .subscribed { subscribed.withLock { $0 = true } }
                changed(hint)
            }
        }
        return subscribed.withLock { $0 }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? KeychainError { return error.message }
        return String(describing: type(of: error))
    }
}
