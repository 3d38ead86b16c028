import BenchWorkload
import AsyncHTTPClient
import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainSystem
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#endif

/// The Keychain Access window's two requests through a real `keychain-access`, on a keychain
/// of its own with 100 items and a keychain password: the list page (`GET /`) beside its
/// floor, the four SecItemCopyMatching of every class's attributes the page needs from
/// securityd; and Show password (`POST /reveal` with the keychain password) beside its floor,
/// the same SecItemCopyMatching with data and the password as the user's presence (the
/// enclave's check, the time a reveal cannot go below); and the activity page (`GET
/// /activity`, securityd's last 200 refusals) beside a refused request: the round trip and the
/// policy check every refusal it lists cost.
enum WindowOperations {
    static let items = 100
    static let passcode = "bench-window"
    static let activityEvents = 200

    static func measure(daemon: String, security: String, directory: String, count: Int) throws -> [BenchReport.KeyOperation] {
        let keychain = try BenchKeychain(daemon: daemon, directory: directory)
        defer { keychain.remove() }
        _ = try keychain.fill(to: items, clients: 1)
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": keychain.paths.home]) { $1 }
        guard try ChildProcess.run(security, ["set-keychain-password", "-p", passcode], environment: environment) == 0 else {
            throw BenchError("security set-keychain-password failed")
        }
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.redirectConfiguration = .disallow  // the login's 303 carries the cookie
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { try? http.syncShutdown() }
        let window = try Window(http: http, environment: environment)
        defer { window.stop() }
        let client = try keychain.connect()
        let presence = SecretBytes(passcode.utf8)
        let list = try KeyOperations.row(
            "keychain-access list page (\(items) items), GET /", floor: "SecItemCopyMatching, attributes of every class", count: count,
            { try window.get("/") },
            floor: {
                for itemClass in ItemClass.allCases where itemClass != .identity {
                    let query: [String: KeychainValue] = [
                        QueryKey.itemClass: .string(itemClass.rawValue), QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll),
                        QueryKey.returnAttributes: .bool(true), QueryKey.returnPersistentRef: .bool(true),
                    ]
                    do {
                        _ = try client.call(Service.CopyMatching(query))
                    } catch let error as KeychainError where error.status == .itemNotFound {}
                }
            })
        var query = BenchItems.query(account: "item-0")
        query[QueryKey.returnData] = .bool(true)
        let reveals = max(count / 20, 5)  // each checks the passcode with the real KDF
        let reveal = try KeyOperations.row(
            "keychain-access Show password, POST /reveal", floor: "SecItemCopyMatching with data and the keychain password", count: reveals,
            { try window.reveal(account: "item-0") },
            floor: { _ = try client.call(Service.CopyMatching(query), presence: presence) })
        // 200 refusals: the bench is no tool, so its own request for the log is one.
        let refused = {
            do {
                _ = try client.call(Service.CopySecurityActivity())
                throw BenchError("securityd gave its activity to keychain-bench")
            } catch let error as KeychainError where error.status == .missingEntitlement {}
        }
        for _ in 0..<activityEvents { try refused() }
        let activity = try KeyOperations.row(
            "keychain-access Activity page (\(activityEvents) refusals), GET /activity", floor: "a refused request (errSecMissingEntitlement)",
            count: count, { try window.activity() }, floor: refused)
        return [list, reveal, activity]
    }

    /// `keychain-access --no-browser`, logged in once with its launch link.
    final class Window: @unchecked Sendable {
        // @unchecked: used by the one thread that drives the benchmark.
        let pid: pid_t
        let port: Int
        let cookie: String
        let csrf: String
        let itemID: String
        let http: HTTPClient

        init(http: HTTPClient, environment: [String: String]) throws {
            self.http = http
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw BenchError("pipe: \(errno)") }
            pid = try ChildProcess.spawn(
                ProcessExecutable.sibling("keychain-access"), ["--no-browser", "--linger", "600"], environment: environment, standardOutput: fds[1])
            close(fds[1])
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(fds[0], &byte, 1) == 1, byte != 10 { line.append(byte) }
            close(fds[0])
            let text = String(decoding: line, as: UTF8.self)
            guard let start = text.firstRange(of: "http://127.0.0.1:"), let end = text[start.upperBound...].firstIndex(of: "/"),
                let port = Int(text[start.upperBound..<end]), let token = text.firstRange(of: "token=").map({ text[$0.upperBound...].prefix { $0.isHexDigit } })
            else { throw BenchError("keychain-access said: \(text)") }
            self.port = port
            let login = try blocking { try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/login?token=\(token)"), timeout: .seconds(30)) }
            guard let setCookie = login.headers["Set-Cookie"].first, let value = setCookie.split(separator: ";").first?.split(separator: "=").last else {
                throw BenchError("keychain-access gave no cookie")
            }
            cookie = String(value)
            let page = try Self.send(http, port: port, cookie: cookie, "GET", "/")
            guard let meta = page.firstRange(of: "name=\"csrf-token\" content=\"") else { throw BenchError("no synchronizer token on the page") }
            csrf = String(page[meta.upperBound...].prefix { $0.isHexDigit })
            guard let link = page.firstRange(of: "/item/") else { throw BenchError("no item listed") }
            itemID = String(page[link.upperBound...].prefix { $0.isHexDigit })
        }

        func get(_ path: String) throws {
            let page = try Self.send(http, port: port, cookie: cookie, "GET", path)
            guard page.components(separatedBy: "<tr data-search").count - 1 == WindowOperations.items else { throw BenchError("the list page lists not every item") }
        }

        func activity() throws {
            let page = try Self.send(http, port: port, cookie: cookie, "GET", "/activity")
            guard page.components(separatedBy: "<tr>").count - 1 >= WindowOperations.activityEvents else {
                throw BenchError("the activity page lists not every refusal")
            }
        }

        func reveal(account: String) throws {
            let body = "id=\(itemID)&keychain=login&passcode=\(passcode)"
            let answer = try Self.send(http, port: port, cookie: cookie, "POST", "/reveal", body: body, csrf: csrf)
            guard answer.hasPrefix("{\"secret\"") else { throw BenchError("reveal: \(answer.prefix(200))") }
        }

        static func send(_ http: HTTPClient, port: Int, cookie: String, _ method: String, _ path: String, body: String? = nil, csrf: String? = nil) throws -> String {
            try blocking {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
                request.method = HTTPMethod(rawValue: method)
                request.headers.add(name: "Cookie", value: "keychain-access=\(cookie)")
                if let body {
                    request.headers.add(name: "Origin", value: "http://127.0.0.1:\(port)")
                    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                    if let csrf { request.headers.add(name: "X-CSRF-Token", value: csrf) }
                    request.body = .bytes(ByteBuffer(string: body))
                }
                let response = try await http.execute(request, timeout: .seconds(30))
                return String(buffer: try await response.body.collect(upTo: 1 << 22))
            }
        }

        func stop() {
            kill(pid, SIGKILL)
            _ = ChildProcess.wait(pid)
        }
    }
}
