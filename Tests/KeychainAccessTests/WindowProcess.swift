import Foundation
import KeychainTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real `keychain-access` for a test keychain, stopped by pid when dropped.
final class WindowProcess: @unchecked Sendable {
    // @unchecked: immutable after init.
    let process: Process
    /// The launch link it printed (`--no-browser`), or nil when it opened a "browser".
    let launchURL: String?
    /// The 0600 file that forwards a browser to the launch link.
    let redirectFile: String
    let port: Int
    var origin: String { "http://127.0.0.1:\(port)" }

    /// - Parameters:
    ///   - browser: a program to run as the browser (`$BROWSER`) instead of `--no-browser`.
    ///   - environment: more variables for it (the System keychain's socket).
    init(home: String, directory: String, linger: Int = 120, browser: String? = nil, environment more: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("keychain-access")
        process.arguments = (browser == nil ? ["--no-browser"] : []) + ["--linger", String(linger)]
        var environment = CommandRunner.testEnvironment.merging(["KEYCHAIN_HOME": home, "HOME": directory, "PATH": "/usr/bin:/bin"]) { _, new in new }
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] { environment["XDG_RUNTIME_DIR"] = runtime }
        if let browser { environment["BROWSER"] = browser }
        environment.merge(more) { _, new in new }
        process.environment = environment
        let output = directory + "/keychain-access-\(UInt32.random(in: 0...UInt32.max)).out"
        guard FileManager.default.createFile(atPath: output, contents: nil) else { throw Chromium.Failure("cannot create \(output)") }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = process.standardOutput
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = ""
        for _ in 0..<400 {
            line = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if line.contains("file://") { break }
            usleep(25_000)
        }
        guard let start = line.firstRange(of: "file://") else { throw Chromium.Failure("keychain-access did not start: \(line)") }
        let file = String(line[start.upperBound...].prefix { $0 != ")" && $0 != "\n" })
        redirectFile = file
        let url = line.firstRange(of: "http://").map { String(line[$0.lowerBound...].prefix { $0 != " " && $0 != "\n" }) }
        launchURL = url
        let page = try String(contentsOfFile: file, encoding: .utf8)
        guard let portText = page.firstRange(of: "http://127.0.0.1:").map({ page[$0.upperBound...].prefix { $0.isNumber } }), let port = Int(portText) else {
            throw Chromium.Failure("no address in \(file)")
        }
        self.port = port
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The one-time token the redirect file holds.
    func tokenInRedirectFile() throws -> String {
        let page = try String(contentsOfFile: redirectFile, encoding: .utf8)
        guard let range = page.firstRange(of: "token=") else { throw Chromium.Failure("no token in \(redirectFile)") }
        return String(page[range.upperBound...].prefix { $0.isHexDigit })
    }

    /// A raw HTTP/1.1 request with curl: the status and body.
    func http(
        _ method: String, _ path: String, host: String? = nil, cookie: String? = nil, origin: String? = nil, headers: [String] = [],
        form: String? = nil
    ) throws -> (status: Int, body: String, headers: String) {
        var arguments = ["-s", "-D", "-", "-X", method, "--max-time", "10", "http://127.0.0.1:\(port)\(path)"]
        if let host { arguments += ["-H", "Host: \(host)"] }
        if let cookie { arguments += ["-H", "Cookie: keychain-access=\(cookie)"] }
        if let origin { arguments += ["-H", "Origin: \(origin)"] }
        for header in headers { arguments += ["-H", header] }
        if let form { arguments += ["--data-raw", form] }
        let result = try CommandRunner.run(executable: "/usr/bin/curl", arguments, clearing: true)
        let text = result.stdout.replacingOccurrences(of: "\r", with: "")
        let parts = text.components(separatedBy: "\n\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts.dropFirst().joined(separator: "\n\n"), head)
    }

    /// Logs in with the token over HTTP: the session cookie.
    func login(token: String) throws -> String? {
        let answer = try http("GET", "/login?token=\(token)")
        guard answer.status == 200, let line = answer.headers.split(separator: "\n").first(where: { $0.lowercased().hasPrefix("set-cookie: keychain-access=") }) else {
            return nil
        }
        return String(line.dropFirst("set-cookie: keychain-access=".count).prefix { $0 != ";" })
    }
}
