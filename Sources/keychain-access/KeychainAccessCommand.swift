import ArgumentParser
import Foundation
import Glibc
import Hummingbird
import HummingbirdWebSocket
import KeychainAccess
import KeychainHardening
import KeychainModel
import KeychainSystem
import Logging

/// keychain-access: the Keychain Access window, served to the user's browser on 127.0.0.1
/// and opened there once through a file only the user can read (docs/SECURITY.md,
/// "Keychain Access").
@main
struct KeychainAccessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain-access",
        abstract: "Open the keychain in a window of your browser.",
        discussion: """
            Serves the window on 127.0.0.1 (a port of its own) and opens the default browser on \
            it through a file only you can read, holding a link that works once. Showing or \
            copying a password asks for the keychain password every time. It exits when its \
            last page has been closed for the --linger time.
            """)

    static let noBrowserHelp = "Print the link instead of opening the browser (it works once)."
    static let lingerHelp = "Exit when no page has been open for this many seconds."

    @Flag(help: ArgumentHelp(Self.noBrowserHelp))
    var noBrowser = false

    @Option(help: ArgumentHelp(Self.lingerHelp))
    var linger = 120

    /// keychain-access(1), from this command's own texts (scripts/install writes it).
    @Flag(help: .hidden)
    var generateManual = false

    static var manualPage: ManualPage {
        ManualPage(
            name: "keychain-access", section: 1, summary: "the Keychain Access window (Trousseau)",
            synopsis: ["[--no-browser] [--linger SECONDS]", "--generate-completion-script bash|zsh|fish"],
            sections: [
                ManualPage.Section("Description", [.paragraph(configuration.abstract), .paragraph(configuration.discussion)]),
                ManualPage.Section(
                    "Options",
                    [
                        .entry("--no-browser", noBrowserHelp), .entry("--linger SECONDS", lingerHelp + " (default: 120)"),
                        .entry("--generate-completion-script SHELL", "Print the completion script for bash, zsh or fish."),
                        .entry("-h, --help", "Show the options."),
                    ]),
                ManualPage.Section(
                    "Security",
                    [
                        .paragraph(
                            "The window is served on 127.0.0.1 only; each request must carry the session's cookie, its Host and Origin, and come from a process of this user. A password is shown or copied only after the keychain password is typed again. See /usr/share/doc/trousseau/SECURITY.md."
                        )
                    ]),
                ManualPage.Section("See also", [.paragraph("security(1), securityd(8)")]),
            ])
    }

    func validate() throws {
        guard (1...86_400).contains(linger) else { throw ValidationError("--linger takes 1 to 86400 seconds") }
    }

    func run() async throws {
        if generateManual {
            print(Self.manualPage.roff, terminator: "")
            return
        }
        // No core file and no crash report may hold a revealed secret. Not non-dumpable:
        // securityd identifies its callers by /proc/PID/exe, which that would hide.
        ProcessHardening.silenceCrashes()
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
        umask(0o077)
        let paths = KeychainPaths.fromEnvironment()
        let directory: KeychainDirectory
        do {
            directory = try KeychainDirectory(paths: paths)
        } catch let error as KeychainError {
            throw ValidationError("cannot reach securityd: \(error.message)")
        }
        let session = AccessSession()
        let activity = WindowActivity()
        let routes = WindowRoutes(session: session, directory: directory, activity: activity)
        var logger = Logger(label: "keychain-access")
        logger.logLevel = .error  // never a request line: a launch link holds its token
        let redirectDirectory = paths.socketDirectory
        let openBrowser = !noBrowser
        let app = Application(
            router: routes.router(),
            server: .http1WebSocketUpgrade(
                webSocketRouter: LiveState.router(session: session, directory: directory, activity: activity),
                configuration: .init(ws: .init(maxFrameSize: 4096))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                session.listening(on: channel.localAddress?.port ?? 0)
                guard let token = session.pendingToken else { return }
                let file: String
                do {
                    file = try session.writeRedirectFile(in: redirectDirectory, token: token)
                } catch {
                    FileHandle.standardError.write(Data("keychain-access: \(error)\n".utf8))
                    Glibc.exit(1)
                }
                // Tests and scripts wait for this line (FileHandle: unbuffered, unlike print).
                let line: String
                if openBrowser {
                    Self.open("file://" + file)
                    line = "keychain-access: opening the window in your browser (file://\(file))\n"
                } else {
                    line = "keychain-access: open \(session.launchURL(token: token)) (or file://\(file))\n"
                }
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger)
        let linger = Duration.seconds(linger)
        Task.detached {
            while true {
                try await Task.sleep(for: .seconds(1))
                if activity.isIdle(for: linger) {
                    unlink(redirectDirectory + "/keychain-access-\(getpid()).html")
                    Glibc.exit(0)
                }
            }
        }
        try await app.runService()
    }

    /// Opens `url` in the user's browser: `$BROWSER`, else xdg-open, in a session of its own.
    static func open(_ url: String) {
        let environment = ProcessInfo.processInfo.environment
        let browser = environment["BROWSER"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? "xdg-open"
        let executable = browser.hasPrefix("/") ? browser : (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/\(browser)" }.first { access($0, X_OK) == 0 } ?? "/usr/bin/xdg-open"
        do {
            _ = try Spawn.process(executable, arguments: [url], environment: environment, descriptors: .init(standardInput: .null, standardOutput: .null, standardError: .null), newSession: true)
        } catch {
            print("keychain-access: cannot open a browser (\(error)); open \(url)")
        }
    }
}
