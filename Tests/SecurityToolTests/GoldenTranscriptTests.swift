import Foundation
import KeychainTestSupport
import Testing

/// Golden transcripts of the `security` tool: each file under `Golden/` is a session of
/// commands run by the built binary against a real daemon in a fresh keychain, with the
/// exact standard output, standard error and exit status each must produce. The expected
/// text is macOS's (usage text, item blocks, messages, statuses); see Golden/README.md for
/// the format.
@Suite struct GoldenTranscriptTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static var transcripts: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".transcript") }.sorted()
    }

    @Test(arguments: transcripts)
    func transcript(_ name: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
        let steps = try Transcript.parse(text)
        #expect(!steps.isEmpty)
        let home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain"
        defer { DaemonControl.stop(home: home) }
        let temporary = try TemporaryKeychain.makeTemporaryDirectory()
        let substitutions = [
            "{keychain}": home + "/keychain.db", "{home}": home, "{fixtures}": Self.directory.appendingPathComponent("fixtures").path,
            "{tmp}": temporary, "{HOME}": ProcessInfo.processInfo.environment["HOME"] ?? "/root",
        ]
        // Items are written by one step and printed by a later one, so a timedate is checked
        // against the transcript's start, not the printing step's.
        let started = Date()
        for step in steps {
            let result = try CommandRunner.run(
                "security", step.arguments.map { substitute($0, substitutions) }, environment: ["KEYCHAIN_HOME": home],
                input: step.input)
            let context = "\(name):\(step.line): security \(step.arguments.joined(separator: " "))"
            #expect(result.status == step.status, "\(context)\n\(result.stderr)")
            expectMatch(result.standardOutput, step.stdout.map { substitute($0, substitutions) }, since: started, context + " (stdout)")
            expectMatch(result.standardError, step.stderr.map { substitute($0, substitutions) }, since: started, context + " (stderr)")
        }
    }

    private func substitute(_ text: String, _ substitutions: [String: String]) -> String {
        substitutions.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }

    /// Compares output with the expected lines byte for byte; a `{timedate}` in an expected
    /// line stands for one timedate value written since `since` (the transcript's start).
    private func expectMatch(_ actual: Data, _ expected: [String], since: Date, _ context: String) {
        // A line ending in `\c` (echo's) is written without its newline.
        let expectedBytes = Data(expected.map { $0.hasSuffix("\\c") ? String($0.dropLast(2)) : $0 + "\n" }.joined().utf8)
        guard expected.contains(where: { $0.contains("{timedate}") }) else {
            #expect(actual == expectedBytes, "\(context)\nexpected:\n\(String(decoding: expectedBytes, as: UTF8.self))\nactual:\n\(String(decoding: actual, as: UTF8.self))")
            return
        }
        var lines = String(decoding: actual, as: UTF8.self).components(separatedBy: "\n")
        #expect(lines.last == "", "\(context): output ends with a newline")
        lines.removeLast()
        #expect(lines.count == expected.count, "\(context)\nexpected:\n\(expected.joined(separator: "\n"))\nactual:\n\(lines.joined(separator: "\n"))")
        for (line, pattern) in zip(lines, expected) {
            guard let range = pattern.range(of: "{timedate}") else {
                #expect(line == pattern, "\(context)")
                continue
            }
            let prefix = String(pattern[..<range.lowerBound]), suffix = String(pattern[range.upperBound...])
            guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.count >= prefix.count + suffix.count else {
                Issue.record("\(context): \(line) does not match \(pattern)")
                continue
            }
            let value = String(line.dropFirst(prefix.count).dropLast(suffix.count))
            #expect(Self.isTimedate(value, since: since), "\(context): \(value) is not a timedate written since \(since)")
        }
    }

    /// `0x<hex>  "<YYYYMMDDhhmmss>Z\000"`: the hex spells the quoted text and its NUL, and the
    /// time is the moment the item was written (within the transcript's run).
    static func isTimedate(_ value: String, since: Date) -> Bool {
        let parts = value.components(separatedBy: "  \"")
        guard parts.count == 2, parts[0].hasPrefix("0x"), parts[1].hasSuffix("Z\\000\"") else { return false }
        let digits = String(parts[1].dropLast(6))
        let text = digits + "Z\u{0}"
        let hex = text.utf8.map { String(format: "%02X", $0) }.joined()
        guard parts[0] == "0x" + hex, digits.count == 14 else { return false }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMddHHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        guard let date = formatter.date(from: digits) else { return false }
        return date >= since.addingTimeInterval(-1).rounded() && date <= Date().addingTimeInterval(1)
    }
}

private extension Date {
    /// Whole seconds, as timedates keep them.
    func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

/// A transcript: `$ security <words>` runs a command (words split as a shell would: quotes
/// and backslashes), `< line` gives it a line of standard input, `> line` and `! line` are
/// the standard output and error lines it must write (`>` or `!` alone: an empty line),
/// `? n` its exit status (0 when absent). `#` starts a comment.
struct Transcript {
    struct Step {
        var line: Int
        var arguments: [String]
        var input = ""
        var stdout: [String] = []
        var stderr: [String] = []
        var status: Int32 = 0
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ text: String) throws -> [Step] {
        var steps: [Step] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("$ security") {
                steps.append(Step(line: index + 1, arguments: words(String(line.dropFirst("$ security".count)))))
                continue
            }
            guard !steps.isEmpty else { throw Malformed(description: "line \(index + 1): output before a command") }
            let body = line.count > 2 ? String(line.dropFirst(2)) : ""
            switch line.first {
            case "<": steps[steps.count - 1].input += body + "\n"
            case ">": steps[steps.count - 1].stdout.append(body)
            case "!": steps[steps.count - 1].stderr.append(body)
            case "?":
                guard let status = Int32(body) else { throw Malformed(description: "line \(index + 1): status \(body)") }
                steps[steps.count - 1].status = status
            default: throw Malformed(description: "line \(index + 1): \(line)")
            }
        }
        return steps
    }

    /// Splits like a shell: blanks separate words, quotes group, a backslash escapes.
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false, escaped = false
        var quote: Character?
        for character in text {
            if escaped {
                word.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " {
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
