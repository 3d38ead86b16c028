import Foundation
import KeychainTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium, headless, driven over the DevTools protocol on
/// `--remote-debugging-pipe`: it reads our commands on its descriptor 3 and writes its
/// answers and events on descriptor 4, each a JSON text ended by NUL. Started as an ordinary
/// process with a profile in a temporary directory, stopped by pid.
final class Chromium: @unchecked Sendable {
    // @unchecked: used from one test's thread at a time.
    static let binary = "/usr/lib/chromium/chromium"  // the real program, not the shell wrapper
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    let profile: String
    private let pid: pid_t
    private let commands: Int32
    private let answers: Int32
    private var buffer: [UInt8] = []
    private var nextID = 0
    /// The events read while waiting for answers (the newest 2,000): `Network.*` once a
    /// page's `Network.enable` was sent.
    private(set) var events: [[String: Any]] = []

    init(directory: String) throws {
        profile = directory + "/chromium-profile"
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var toChrome: [Int32] = [0, 0], fromChrome: [Int32] = [0, 0]
        guard pipe(&toChrome) == 0, pipe(&fromChrome) == 0 else { throw Failure("pipe: \(errno)") }
        // Its ends, moved above 4 so that the dup2s onto 3 and 4 cannot overwrite each other.
        let childRead = fcntl(toChrome[0], F_DUPFD_CLOEXEC, 10), childWrite = fcntl(fromChrome[1], F_DUPFD_CLOEXEC, 10)
        close(toChrome[0])
        close(fromChrome[1])
        _ = fcntl(toChrome[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromChrome[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, childRead, 3)
        posix_spawn_file_actions_adddup2(&actions, childWrite, 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/chromium.log", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments = [
            Self.binary, "--headless=new", "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
            "--no-sandbox",  // CI runs as root, where Chromium's sandbox refuses to start
            "--disable-gpu", "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--user-data-dir=\(profile)", "--window-size=1200,800", "about:blank",
        ]
        let environment = ["HOME": directory, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.binary, &actions, nil, argv, envp)
        close(childRead)
        close(childWrite)
        guard spawned == 0 else { throw Failure("cannot start chromium: \(spawned)") }
        self.pid = pid
        commands = toChrome[1]
        answers = fromChrome[0]
    }

    deinit {
        close(commands)
        close(answers)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Sends a command (to a page's session when given) and returns its result.
    @discardableResult
    func send(_ method: String, session: String? = nil, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure("chromium went away (\(method))") }
            written += count
        }
        let deadline = Date().addingTimeInterval(30)
        while true {
            guard Date() < deadline else { throw Failure("chromium did not answer \(method) within 30 s") }
            let answer = try readMessage(method)
            guard answer["id"] as? Int == nextID else {  // an event, or an older answer
                if answer["method"] != nil {
                    events.append(answer)
                    if events.count > 2000 { events.removeFirst(events.count - 2000) }
                }
                continue
            }
            if let error = answer["error"] { throw Failure("\(method): \(error)") }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func readMessage(_ method: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let message = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                return try JSONSerialization.jsonObject(with: message) as? [String: Any] ?? [:]
            }
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 30_000) == 1 else { throw Failure("chromium did not answer \(method) within 30 s") }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure("chromium closed its pipe (\(method))") }
            buffer += chunk[..<count]
        }
    }

    /// Opens a new tab and attaches to it: its session id.
    func newPage() throws -> Page {
        let target = try send("Target.createTarget", ["url": "about:blank"])["targetId"] as! String
        let session = try send("Target.attachToTarget", ["targetId": target, "flatten": true])["sessionId"] as! String
        try send("Page.enable", session: session)
        try send("Accessibility.enable", session: session)
        return Page(browser: self, target: target, session: session)
    }

    /// One tab.
    struct Page {
        let browser: Chromium
        let target: String
        let session: String

        func navigate(_ url: String) throws {
            try browser.send("Page.navigate", session: session, ["url": url])
            try wait("document.readyState === 'complete' && location.href !== 'about:blank'")
        }

        /// The value of a JavaScript expression (awaited when a promise).
        @discardableResult
        func evaluate(_ expression: String) throws -> Any? {
            let result = try browser.send("Runtime.evaluate", session: session, ["expression": expression, "awaitPromise": true, "returnByValue": true])
            if let exception = result["exceptionDetails"] { throw Failure("\(expression): \(exception)") }
            return (result["result"] as? [String: Any])?["value"]
        }

        /// The statuses of the responses this page received for URLs starting with `prefix`
        /// (after ``enableNetworkEvents()``), in order: from `responseReceivedExtraInfo`, which
        /// Chromium sends also for a response it then blocks from the page (an image that is
        /// not one, cross-origin), matched to its request by id.
        func responseStatuses(startingWith prefix: String) throws -> [Int] {
            try evaluate("1")  // reads what has arrived
            let mine = browser.events.filter { $0["sessionId"] as? String == session }
            let requests = Set(mine.compactMap { event -> String? in
                guard event["method"] as? String == "Network.requestWillBeSent", let parameters = event["params"] as? [String: Any],
                    let url = (parameters["request"] as? [String: Any])?["url"] as? String, url.hasPrefix(prefix)
                else { return nil }
                return parameters["requestId"] as? String
            })
            return mine.compactMap { event -> Int? in
                guard event["method"] as? String == "Network.responseReceivedExtraInfo", let parameters = event["params"] as? [String: Any],
                    let id = parameters["requestId"] as? String, requests.contains(id)
                else { return nil }
                return parameters["statusCode"] as? Int
            }
        }

        func enableNetworkEvents() throws {
            try browser.send("Network.enable", session: session)
        }

        func text(_ selector: String) throws -> String {
            try evaluate("(document.querySelector(\(Self.quoted(selector)))?.textContent ?? '').trim()") as? String ?? ""
        }

        /// Waits until `expression` is true (navigations in between are retried).
        func wait(_ expression: String, timeout: Double = 10) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if (try? evaluate("!!(\(expression))")) as? Bool == true { return }
                usleep(50_000)
            }
            // What the page said instead, for the log (test pages hold no real secret).
            let shown = (try? evaluate("location.href + ': ' + (document.body?.innerText ?? '').replace(/\\s+/g, ' ').slice(0, 600)")) as? String ?? "?"
            throw Failure("timed out waiting for \(expression); the page: \(shown)")
        }

        /// Clicks the element as a person would: its centre, with the mouse.
        func click(_ selector: String) throws {
            // `a:nth-match-N`: the Nth element `a` matches (ours, for click(_:text:)).
            let parts = selector.components(separatedBy: ":nth-match-")
            let element = "document.querySelectorAll(\(Self.quoted(parts[0])))[\(parts.count > 1 ? parts[1] : "0")]"
            try evaluate("\(element).scrollIntoView({block: 'center'})")
            guard let box = try evaluate("(() => { const r = \(element).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()") as? [Double] else {
                throw Failure("no element \(selector)")
            }
            for type in ["mousePressed", "mouseReleased"] {
                try browser.send("Input.dispatchMouseEvent", session: session, ["type": type, "x": box[0], "y": box[1], "button": "left", "clickCount": 1])
            }
        }

        /// Clicks the first element matching `selector` whose text is `text`, once there is
        /// one: a page just navigated to may still be filling its list. Two fresh-clone runs
        /// on two loaded cores (a release build beside the suite) found no link after 10 s;
        /// this waits 30 s and, if it is still missing, throws what the page shows.
        func click(_ selector: String, text: String) throws {
            let find = "Array.from(document.querySelectorAll(\(Self.quoted(selector)))).findIndex((e) => e.textContent.trim() === \(Self.quoted(text)))"
            try wait("\(find) >= 0", timeout: 30)
            let index = try evaluate(find) as? Int ?? -1
            guard index >= 0 else { throw Failure("no \(selector) reading \(text)") }
            try click("\(selector):nth-match-\(index)")
        }

        /// Focuses a field and types `text` into it as keyboard input.
        func type(_ selector: String, _ text: String) throws {
            try evaluate("(() => { const e = document.querySelector(\(Self.quoted(selector))); e.focus(); e.value = ''; })()")
            try browser.send("Input.insertText", session: session, ["text": text])
        }

        /// Presses a key (`Tab`, `Enter`) with the keyboard.
        func press(_ key: String, shift: Bool = false) throws {
            let codes = ["Tab": 9, "Enter": 13, "Escape": 27, " ": 32]
            for type in ["rawKeyDown", "keyUp"] {
                var parameters: [String: Any] = ["type": type, "key": key, "code": key == " " ? "Space" : key, "windowsVirtualKeyCode": codes[key] ?? 0]
                if shift { parameters["modifiers"] = 8 }
                try browser.send("Input.dispatchKeyEvent", session: session, parameters)
            }
            if key == "Enter" || key == " " {
                try browser.send("Input.dispatchKeyEvent", session: session, ["type": "char", "text": key == "Enter" ? "\r" : " "])
            }
        }

        /// Sets the files of a file input, as choosing them in the file dialog does.
        func setFiles(_ selector: String, _ files: [String]) throws {
            let found = try browser.send("Runtime.evaluate", session: session, ["expression": "document.querySelector(\(Self.quoted(selector)))"])
            guard let object = (found["result"] as? [String: Any])?["objectId"] as? String else { throw Failure("no element \(selector)") }
            try browser.send("DOM.setFileInputFiles", session: session, ["objectId": object, "files": files])
        }

        func screenshot(to path: String) throws {
            let shot = try browser.send("Page.captureScreenshot", session: session, ["format": "png"])
            try Data(base64Encoded: shot["data"] as! String)!.write(to: URL(fileURLWithPath: path))
        }

        /// The accessibility tree's nodes: role, name, whether ignored.
        func accessibilityNodes() throws -> [(role: String, name: String, ignored: Bool)] {
            let tree = try browser.send("Accessibility.getFullAXTree", session: session)
            return (tree["nodes"] as? [[String: Any]] ?? []).map { node in
                let role = (node["role"] as? [String: Any])?["value"] as? String ?? ""
                let name = (node["name"] as? [String: Any])?["value"] as? String ?? ""
                return (role, name, node["ignored"] as? Bool ?? false)
            }
        }

        func close() throws {
            try browser.send("Target.closeTarget", ["targetId": target])
        }

        static func quoted(_ text: String) -> String {
            let data = try! JSONSerialization.data(withJSONObject: [text])
            return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        }
    }
}
