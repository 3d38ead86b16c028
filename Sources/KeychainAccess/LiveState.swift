import Crypto
import FoundationEssentials
public import Hummingbird
public import HummingbirdWebSocket
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

    public static func router(session: AccessSession, directory: KeychainDirectory, activity: WindowActivity) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("live") { request, _ in
            guard let host = request.head.authority, session.isOwnHost(host),
                let origin = request.headers[.origin], session.isOwnOrigin(origin),
                session.isSessionCookie(request.cookies[AccessSession.cookieName]?.value)
            else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let keychainID = context.request.uri.queryParameters["keychain"].map(String.init) ?? "login"
            activity.pageOpened()
            defer { activity.pageClosed() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in inbound {}  // the page sends nothing; this ends when it closes
                }
                group.addTask {
                    var last = ""
                    while !Task.isCancelled {
                        let message = snapshot(directory, keychainID: keychainID)
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

    /// `{"generation":"…"}`, or `{"offline":"…"}` while securityd cannot be reached.
    static func snapshot(_ directory: KeychainDirectory, keychainID: String) -> String {
        let keychains = directory.keychains()
        guard keychains.first?.locked != nil else { return #"{"offline":"securityd cannot be reached"}"# }
        let current = keychains.first { $0.id == keychainID } ?? keychains[0]
        let items = current.locked == true || current.isReadOnly ? [] : ((try? directory.items(in: current)) ?? [])
        return #"{"generation":""# + generation(of: keychains, items: items) + #""}"#
    }

    /// A digest of what the page shows: each keychain's lock state, and the current one's
    /// items (identity and modification date).
    static func generation(of keychains: [WindowKeychain], items: [WindowItem]) -> String {
        var text = keychains.map { "\($0.id)=\($0.locked.map { $0 ? "locked" : "unlocked" } ?? "-")" }.joined(separator: ",")
        for item in items.sorted(by: { $0.id < $1.id }) {
            text += ";\(item.id)@\(item.modified?.timeIntervalSince1970 ?? 0)"
        }
        return KeychainDirectory.hex(SHA256.hash(data: Data(text.utf8)).prefix(12))
    }
}
