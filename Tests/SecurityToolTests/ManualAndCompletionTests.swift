import Foundation
import KeychainTestSupport
import Testing

/// The manual pages and completion scripts the programs write from their own tables
/// (`--generate-manual`, `--generate-completion-script`), as man, bash, zsh and fish read them.
@Suite final class ManualAndCompletionTests {
    let directory: String

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit {
        try? FileManagerLite.removeTree(directory)
    }

    /// The commands `security help` lists, in its order.
    func commandNames() throws -> [String] {
        let help = try CommandRunner.run("security", ["help"])
        try #require(help.status == 0)
        return help.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// `product --generate-manual`, written to a file named like the installed page.
    func page(of product: String, section: Int) throws -> String {
        let generated = try CommandRunner.run(product, ["--generate-manual"])
        try #require(generated.status == 0, "\(generated.stderr)")
        let file = directory + "/\(product).\(section)"
        try generated.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// What man shows of a page, and its warnings (lintian runs man the same way).
    func render(_ file: String) throws -> (text: String, warnings: String) {
        let rendered = try CommandRunner.run(
            executable: "/usr/bin/man", ["--warnings", "-E", "UTF-8", "-l", file], environment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        return (rendered.stdout, rendered.stderr)
    }

    @Test(.requires("man")) func everyCommandHasItsSectionInSecuritysManual() throws {
        let names = try commandNames()
        #expect(names.count > 30 && names.contains("find-generic-password") && names.contains("sync"), "\(names)")
        let file = try page(of: "security", section: 1)
        let source = try String(contentsOfFile: file, encoding: .utf8)
        let sections = source.split(separator: "\n").filter { $0.hasPrefix(".SS ") }.map { $0.dropFirst(4).replacingOccurrences(of: "\\-", with: "-") }
        #expect(sections == names, "one section per command, in the table's order")
        let (text, warnings) = try render(file)
        #expect(warnings.isEmpty, "\(warnings)")
        // Each section holds the command's usage as `security help NAME` prints it.
        for name in ["find-generic-password", "add-trusted-cert", "sync"] {
            let usage = try CommandRunner.run("security", ["help", name]).stdout
            let synopsis = try #require(usage.split(separator: "\n").first).dropFirst("Usage: ".count)
            #expect(text.contains("security " + synopsis), "\(name)'s synopsis")
        }
        #expect(text.contains("-w  Display only the password on stdout"), "an option's line is there as help prints it")
    }

    @Test(.requires("man")) func theDaemonsAndTheWindowsPagesRender() throws {
        let daemon = try render(try page(of: "securityd", section: 8))
        #expect(daemon.warnings.isEmpty, "\(daemon.warnings)")
        let help = try CommandRunner.run("securityd", ["--help"])
        #expect(help.status == 0)
        // Every option --help names is described on the page.
        let options = help.stdout.split(separator: "\n").filter { $0.hasPrefix("  --") }.map { String($0.dropFirst(2).prefix { $0 != " " }) }
        #expect(options.count == 7 && options.allSatisfy { daemon.text.contains($0) }, "\(options)")
        // securityd takes exactly those: anything else is refused with the usage, before it
        // starts (no keychain, no socket).
        let unknown = try CommandRunner.run("securityd", ["--home", directory + "/refused", "--bogus"])
        #expect(unknown.status == 64 && unknown.stderr.hasPrefix("securityd: unknown option --bogus\nusage:\n"), "\(unknown.stderr)")
        #expect(try CommandRunner.run("securityd", ["--home"]).stderr.hasPrefix("securityd: --home needs a value\n"))
        // The page's flag only alone: with others it would otherwise start a daemon.
        #expect(try CommandRunner.run("securityd", ["--generate-manual", "--home", directory + "/refused"]).status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory + "/refused"))
        #expect(try CommandRunner.run("securityd", ["--system", "--help"]).stdout == help.stdout, "--help wherever it is")
        #expect(daemon.text.contains("JOURNAL_STREAM") && daemon.text.contains("TROUSSEAU_SECURITYD_IDLE_SECONDS"))

        let window = try render(try page(of: "keychain-access", section: 1))
        #expect(window.warnings.isEmpty, "\(window.warnings)")
        let windowHelp = try CommandRunner.run("keychain-access", ["--help"]).stdout
        #expect(windowHelp.contains("--no-browser") && window.text.contains("--no-browser") && window.text.contains("--linger"))
        #expect(!windowHelp.contains("generate-manual"), "the page's flag is not offered to users")
    }

    /// A completion script of `security` for `shell`, in a file.
    func completion(_ shell: String) throws -> String {
        let generated = try CommandRunner.run("security", ["--generate-completion-script", shell])
        try #require(generated.status == 0, "\(generated.stderr)")
        let file = directory + "/security.\(shell)"
        try generated.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Completion runs `security list-keychains`: the products' one, for this keychain.
    var completionEnvironment: [String: String] {
        [
            "PATH": CommandRunner.productsDirectory.path + ":/usr/bin:/bin", "KEYCHAIN_HOME": directory + "/keychain", "HOME": directory,
        ]
    }

    @Test(.requires("bash")) func bashCompletesCommandsOptionsSubcommandsAndKeychains() throws {
        let script = try completion("bash")
        func complete(_ words: String...) throws -> [String] {
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let result = try CommandRunner.run(
                executable: "/bin/bash", ["-c", "source '\(script)'; COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _security; printf '%s\\n' \"${COMPREPLY[@]}\""],
                environment: completionEnvironment)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete("security", "find-gen") == ["find-generic-password"])
        #expect(try complete("security", "-q", "dump-k") == ["dump-keychain"])
        #expect(try complete("security", "find-generic-password", "--acc") == ["--access-group"])
        #expect(try complete("security", "backup", "re") == ["restore"])
        #expect(try complete("security", "show-keychain-info", "").first == directory + "/keychain/keychain.db", "the search list's first, then files")
        #expect(try complete("security", "show-keychain-info", directory + "/k") == [directory + "/keychain/keychain.db", directory + "/keychain"])
        // A prefix is the command it names (`find` is find-generic-password), and a file argument completes.
        #expect(try complete("security", "find", "--acc") == ["--access-group"])
        #expect(try complete("security", "import", directory + "/security.ba") == [directory + "/security.bash"])
        #expect(try complete("security", "backup", "restore", directory + "/security.ba") == [directory + "/security.bash"])
    }

    @Test(.requires("fish")) func fishCompletesCommandsOptionsSubcommandsAndKeychains() throws {
        let script = try completion("fish")
        func complete(_ line: String) throws -> [String] {
            let result = try CommandRunner.run(
                executable: "/usr/bin/fish", ["--no-config", "-c", "source '\(script)'; complete -C '\(line)'"], environment: completionEnvironment)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        }
        #expect(try complete("security find-gen") == ["find-generic-password"])
        #expect(try complete("security find-generic-password --acc") == ["--access-group"])
        #expect(try complete("security backup ").sorted() == ["create", "inspect", "restore"])
        #expect(try complete("security show-keychain-info ").contains(directory + "/keychain/keychain.db"))
        #expect(try complete("security import \(directory)/security.fi") == [directory + "/security.fish"])
        #expect(try complete("security backup restore \(directory)/security.fi") == [directory + "/security.fish"])
    }

    /// zsh completes only in its line editor: an interactive zsh on a terminal (Python's pty),
    /// given `security find-gen` and a TAB, must put the whole command on the line.
    @Test(.requires("zsh"), .requires("python3")) func zshCompletesACommandOnItsLine() throws {
        let functions = directory + "/zsh"
        try FileManager.default.createDirectory(atPath: functions, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try completion("zsh"), toPath: functions + "/_security")
        let driver = """
            import os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execvp("zsh", ["zsh", "-f", "-i"])
            def read(seconds, until=None):
                out, end = b"", time.time() + seconds
                while time.time() < end and not (until and until in out):
                    if select.select([fd], [], [], 0.1)[0]:
                        try: out += os.read(fd, 65536)
                        except OSError: break
                return out
            os.write(fd, b"fpath=(" + sys.argv[1].encode() + b" $fpath); autoload -U compinit; compinit -u -D; PS1='ready> '\\n")
            read(10, b"ready> ")
            os.write(fd, sys.argv[2].encode() + b"\\t")
            out = read(10, b"find-generic-password")
            os.write(fd, b"\\x03exit\\n")
            sys.stdout.write(out.decode(errors="replace"))
            """
        let result = try CommandRunner.run(
            executable: "/usr/bin/python3", ["-c", driver, functions, "security find-gen"], environment: completionEnvironment)
        #expect(result.stdout.contains("security find-generic-password"), "\(result.stdout)\(result.stderr)")
    }
}
