import Crypto
import FoundationEssentials
public import Hummingbird
import HummingbirdWebSocket
import KeychainModel

/// How long the window has been without a page, and whether something changed: the window
/// exits when its last page has been closed for a while (as Jupyter's server does not,
/// and a window should).
public final class WindowActivity: Sendable {
    private struct State {
        var pages = 0
        var lastSeen = ContinuousClock.now
        var changes = 0
    }

    private let state = BlockingMutex(State())

    public init() {}

    func touch() { state.withLock { $0.lastSeen = .now } }

    func changed() { state.withLock { $0.changes += 1 } }

    var changes: Int { state.withLock { $0.changes } }

    func pageOpened() { state.withLock { $0.pages += 1; $0.lastSeen = .now } }

    func pageClosed() { state.withLock { $0.pages -= 1; $0.lastSeen = .now } }

    /// Whether no page has been open, nor any request come, for `linger`.
    public func isIdle(for linger: Duration) -> Bool {
        state.withLock { $0.pages == 0 && ContinuousClock.now - $0.lastSeen > linger }
    }
}

/// `GET /live`: a WebSocket over which an open page hears the keychain change — locked or
/// unlocked, items changed by another program — and securityd going away and coming back.
/// Upgraded only for the page's own Host and Origin with the session cookie.
public enum LiveState {
    /// How often the state is read while a page is open.
    static let interval = Duration.milliseconds(1000)

    public static func router(session: AccessSession, directory: KeychainDirectory, activity: WindowActivity) -> Router<WindowRequestContext> {
        let router = Router(context: WindowRequestContext.self)
        router.ws("live") { request, context in
            guard LoopbackPeer.isOwnUser(context.channel, port: session.port), let host = request.head.authority, session.isOwnHost(host),
                let origin = request.headers[.origin], session.isOwnOrigin(origin),
                session.isSessionCookie(request.cookies[AccessSession.cookieName]?.value)
            else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            activity.pageOpened()
            defer { activity.pageClosed() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in inbound {}  // the page sends nothing; this ends when it closes
                }
                group.addTask {
                    var last = ""
                    while !Task.isCancelled {
                        let message = snapshot(directory, run: session.run)
                        if message != last {
                            try await outbound.write(.text(message))
                            last = message
                        }
                        try await Task.sleep(for: interval)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        return router
    }

    /// `{"run":"…","generation":"…"}`, or `{"run":"…","offline":"…"}` while securityd cannot be
    /// reached (`run`: ``AccessSession/run``). Reads no item: reading decrypts, and would keep
    /// the keychain from locking after its timeout.
    static func snapshot(_ directory: KeychainDirectory, run: String) -> String {
        let keychains = directory.keychains()
        guard let changes = keychains.first?.changeCount else {
            return #"{"run":""# + run + #"","offline":"securityd cannot be reached"}"#
        }
        return #"{"run":""# + run + #"","generation":""# + generation(of: keychains, changes: changes) + #""}"#
    }

    /// A digest of what the page shows: each keychain's lock state, and securityd's count of
    /// committed writes (an item added, changed or removed by any program).
    static func generation(of keychains: [WindowKeychain], changes: UInt64) -> String {
        // (The System keychain's own count too, when its daemon gives it: root's or its user's.)
        let text = keychains.map { keychain in
            let state = keychain.available ? keychain.locked.map { $0 ? "locked" : "unlocked" } ?? "-" : "gone"
            return "\(keychain.id)=\(state)" + (keychain.kind.isSystem ? "/\(keychain.changeCount.map(String.init) ?? "-")" : "")
        }.joined(separator: ",") + ";\(changes)"
        return Hexadecimal.string(SHA256.hash(data: Data(text.utf8)).prefix(12))
    }
}
