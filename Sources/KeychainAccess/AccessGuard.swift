import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Every request passes here first, in this order (docs/SECURITY.md, "Keychain Access"):
///
/// 0. The connection must come from a process of this user (``LoopbackPeer``): the cookie
///    alone does not prove that, since browsers send it to every port of 127.0.0.1 — 403.
/// 1. `Host` must be the window's own address (127.0.0.1 or localhost, its port): anything
///    else is DNS rebinding or a proxy — 421, nothing done.
/// 2. `GET /login?token=` exchanges the one-time token for the session cookie (once), with a
///    page that goes on to `/`.
/// 3. Without the session cookie — 403; from a page other than the window's own
///    (`Sec-Fetch-Site` neither `same-origin` nor `none`) — 403.
/// 4. A request that may change something (not GET or HEAD) must come from the page's own
///    `Origin` and carry the synchronizer token (`X-CSRF-Token`, or the form's `csrf`
///    field) — 403.
///
/// Every response then carries the window's headers: a content security policy that admits
/// only the binary's own script and style and no framing, `Cache-Control: no-store`,
/// `Referrer-Policy: same-origin` (with `no-referrer` Chromium sends `Origin: null` on the
/// page's own form posts), and `X-Content-Type-Options: nosniff`.
struct AccessGuard: RouterMiddleware {
    typealias Context = WindowRequestContext

    let session: AccessSession
    let activity: WindowActivity

    /// The largest form a page posts (an imported file travels in its own route's limit).
    static var formLimit: Int { 64 * 1024 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await check(request, context: context, next: next)
        Self.addHeaders(&response.headers)
        return response
    }

    private func check(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard LoopbackPeer.isOwnUser(context.channel, port: session.port) else {
            return Self.refusal(.forbidden, "This window is another user's.")
        }
        guard let host = request.head.authority, session.isOwnHost(host) else {
            return Self.refusal(.misdirectedRequest, "This window answers only at its own address.")
        }
        if request.uri.path == "/login" {
            guard request.method == .get, let token = request.uri.queryParameters["token"], session.redeem(token) else {
                return Self.refusal(.forbidden, "This link has been used. Run keychain-access again to open the window.")
            }
            // A page of the window's own that goes on to `/`, not a 303: the browser usually
            // comes from the launch file (file://), and a redirect would keep that cross-site
            // start, for which the browser withholds the SameSite=Strict cookie just set. From
            // this page the next request is the window's own (`Sec-Fetch-Site: same-origin`).
            var response = Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.enteringPage)))
            response.setCookie(Cookie(name: AccessSession.cookieName, value: session.cookie, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        guard session.isSessionCookie(request.cookies[AccessSession.cookieName]?.value) else {
            return Self.refusal(.forbidden, "No session: open the window with the link keychain-access gave.")
        }
        // Another port of 127.0.0.1 is the same *site*, so its pages' links and `<img>`s carry
        // the SameSite=Strict cookie: a GET could list items, reset the auto-lock timer or put
        // chosen words in a notice. Browsers say where a request came from (Fetch Metadata):
        // only the window's own page, or the user (the address bar, a bookmark), may ask.
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" {
            return Self.refusal(.forbidden, "This request did not come from the window's own page.")
        }
        activity.touch()
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        guard let origin = request.headers[.origin], session.isOwnOrigin(origin) else {
            return Self.refusal(.forbidden, "This request did not come from the window's own page.")
        }
        if session.isCSRFToken(request.headers[.csrfToken]) { return try await next(request, context) }
        var request = request
        let body = try await request.collectBody(upTo: Self.formLimit)
        guard session.isCSRFToken(FormFields(body).text("csrf")) else {
            return Self.refusal(.forbidden, "This request did not carry the window's token.")
        }
        return try await next(request, context)
    }

    /// What `/login` answers: on to `/` at once (a refresh is navigation, which the content
    /// security policy does not govern; no script).
    static let enteringPage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/"><title>Keychain Access</title></head>
        <body><p><a href="/">Open Keychain Access</a></p></body></html>

        """

    static func addHeaders(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[.cacheControl] = "no-store"
        headers[.referrerPolicy] = "same-origin"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

extension HTTPField.Name {
    static let csrfToken = Self("X-CSRF-Token")!
    static let secFetchSite = Self("Sec-Fetch-Site")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let xFrameOptions = Self("X-Frame-Options")!
}
