import KeychainClient
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// `security`: the macOS keychain tool's commands, over Trousseau's keychain.
///
/// `security [-h] [-i] [-p prompt] [-q] [-v] [command] [opt ...]`, as on macOS: a command
/// is matched by prefix (the first in the table wins, so `find` is find-generic-password),
/// `-i` reads one command per line, and the exit status is the command's OSStatus
/// truncated to 8 bits.
@main
enum SecurityTool {
    static func main() {
        let status = run(Array(CommandLine.arguments.dropFirst()))
        ToolOutput.flush()
        exit(status)
    }

    static func run(_ arguments: [String]) -> Int32 {
        // Not macOS's (its tool has none); what a Debian package's programs answer.
        if arguments == ["--version"] {
            ToolOutput.print(InstallationLayout.versionLine(of: "security") + "\n")
            return 0
        }
        // Not macOS's either: the manual page and completions scripts/install writes, from
        // the command table (the flags swift-argument-parser's tools answer).
        if arguments == ["--generate-manual"] {
            ToolOutput.print(ToolManual.page.roff)
            return 0
        }
        if arguments.first == "--generate-completion-script" {
            guard arguments.count == 2, let shell = ShellCompletion.Shell(rawValue: arguments[1]) else {
                ToolOutput.report("--generate-completion-script takes one of: bash, zsh, fish")
                return ToolCommand.showUsage
            }
            ToolOutput.print(ShellCompletion.script(for: shell))
            return 0
        }
        var help = false, interactive = false, quiet = false, verbose = false
        var prompt = "security> "
        let parsed: (options: [OptionParser.Option], operands: [String])
        do {
            parsed = try OptionParser("hip:qv").parse(arguments[...])
        } catch {
            return usage()
        }
        for option in parsed.options {
            switch option.name {
            case "h": help = true
            case "i": interactive = true
            case "p":
                interactive = true
                prompt = option.value ?? prompt
            case "q": quiet = true
            default: verbose = true
            }
        }
        let session = ToolSession(quiet: quiet, verbose: verbose)
        // `-h` munges its arguments as macOS's does: the word before the commands stands in
        // for the command name in "no such command" messages.
        if help { return showHelp(arguments[arguments.count - parsed.operands.count - 1], parsed.operands) }
        if !parsed.operands.isEmpty { return execute(parsed.operands, session) }
        guard interactive else { return usage() }
        return runInteractively(prompt: prompt, session)
    }

    /// Reads commands from standard input until its end; reports each failing command as
    /// `<name>: returned <status>` unless `-q`. The exit status is the last command's.
    private static func runInteractively(prompt: String, _ session: ToolSession) -> Int32 {
        let showPrompt = isatty(STDIN_FILENO) == 1
        var result: Int32 = 0
        while true {
            if showPrompt { ToolOutput.error(prompt) }
            var line: [UInt8] = []
            guard TerminalInput.readLine(from: STDIN_FILENO, into: &line) else { break }
            let words = CommandLineSplitter.split(String(decoding: line, as: UTF8.self))
            result = execute(words, session)
            ToolOutput.flush()
            if result != 0, !session.quiet {
                ToolOutput.error("\(words[0]): returned \(result)\n")
            }
        }
        return result
    }

    /// Runs the command `words[0]` names, with the rest as its arguments.
    static func execute(_ words: [String], _ session: ToolSession) -> Int32 {
        guard let typed = words.first else { return 0 }
        guard let command = CommandTable.command(matching: typed) else {
            ToolOutput.report("unknown command \"\(typed)\"")
            return 1
        }
        if session.verbose {
            ToolOutput.error(command.name + command.echo(words).dropFirst().map { " \"\($0)\"" }.joined() + "\n")
        }
        let result = command.run(words, session)
        if result == ToolCommand.showUsage {
            ToolOutput.error("Usage: \(command.name) \(command.usage)\n        \(command.help)\n")
        }
        return result
    }

    /// `help` with no names lists every command; with names, prints each one's usage.
    static func showHelp(_ name: String, _ commands: [String]) -> Int32 {
        guard !commands.isEmpty else {
            for command in CommandTable.commands {
                let padding = String(repeating: " ", count: max(0, 36 - command.name.count))
                ToolOutput.print("    \(command.name)\(padding) \(command.help)\n")
            }
            return 0
        }
        for typed in commands {
            guard let command = CommandTable.command(matching: typed) else {
                ToolOutput.report("\(name): no such command: \(typed)")
                return 1
            }
            ToolOutput.print("Usage: \(command.name) \(command.usage)\n")
        }
        return 0
    }

    /// The flags before the command (`-h` is not listed, as on macOS).
    static let globalOptions: [(flag: String, text: String)] = [
        ("-i", "Run in interactive mode."),
        ("-p", "Set the prompt to \"prompt\" (implies -i)."),
        ("-q", "Be less verbose."),
        ("-v", "Be more verbose about what's going on."),
    ]

    private static func usage() -> Int32 {
        ToolOutput.print(
            """
            Usage: security [-h] [-i] [-p prompt] [-q] [-v] [command] [opt ...]

            """ + globalOptions.map { "    \($0.flag)    \($0.text)\n" }.joined() + "security commands are:\n")
        _ = showHelp("help", [])
        return ToolCommand.showUsage
    }
}

/// Splits a line of `security -i` into words as macOS's tool does: blanks separate words,
/// `"…"` and `'…'` quote, and a backslash takes the next character literally, inside
/// quotes too. Unlike macOS's, a quoted part joins the word it touches (`'it'"'"'s'` is
/// one word, as a shell and shell-quoting libraries expect).
enum CommandLineSplitter {
    static func split(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                word.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
