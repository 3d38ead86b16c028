/// A manual page in man(7)'s macros, written from a program's own tables (the commands
/// `security help` lists, the options a daemon parses), so that the page and the program
/// cannot say different things. Programs print theirs with `--generate-manual`;
/// scripts/install writes them to share/man.
public struct ManualPage: Sendable {
    /// A piece of a section.
    public enum Block: Sendable {
        /// Filled text.
        case paragraph(String)
        /// Lines kept as they are (usage text laid out in columns), indented.
        case preformatted(String)
        /// A term in bold (an option, a file, a variable) and what it is.
        case entry(String, String)
        /// A subsection's heading (one per command).
        case subsection(String)
    }

    public struct Section: Sendable {
        public var title: String
        public var blocks: [Block]

        public init(_ title: String, _ blocks: [Block]) {
            self.title = title
            self.blocks = blocks
        }
    }

    public var name: String
    /// 1: user commands; 8: system administration (a daemon).
    public var section: Int
    /// The NAME line's description.
    public var summary: String
    /// The SYNOPSIS's lines, each a way to run the program.
    public var synopsis: [String]
    public var sections: [Section]

    public init(name: String, section: Int, summary: String, synopsis: [String], sections: [Section]) {
        self.name = name
        self.section = section
        self.summary = summary
        self.synopsis = synopsis
        self.sections = sections
    }

    /// The page's roff source.
    public var roff: String {
        let manual = section == 8 ? "System Administration" : "User Commands"
        var out = ".TH \(name.uppercased()) \(section) \"\" \"Trousseau\" \"\(manual)\"\n"
        out += ".SH NAME\n\(Self.escape(name)) \\- \(Self.escape(summary))\n"
        out += ".SH SYNOPSIS\n"
        out += synopsis.map { ".B \(Self.escape(name))\n\(Self.escape($0))\n" }.joined(separator: ".br\n")
        for section in sections {
            out += ".SH \(Self.escape(section.title.uppercased(), argument: true))\n"
            for block in section.blocks {
                switch block {
                case .paragraph(let text):
                    out += ".PP\n\(Self.escape(text))\n"
                case .preformatted(let text):
                    out += ".PP\n.RS 4\n.nf\n"
                    out += text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.escape(String($0)) + "\n" }.joined()
                    out += ".fi\n.RE\n"
                case .entry(let term, let text):
                    out += ".TP\n.B \(Self.escape(term, argument: true))\n\(Self.escape(text))\n"
                case .subsection(let title):
                    out += ".SS \(Self.escape(title, argument: true))\n"
                }
            }
        }
        return out
    }

    /// Text as roff reads it literally: a backslash is `\e`, a hyphen-minus `\-` (what the
    /// reader types), and a line that would start with a control character is guarded.
    /// A macro's `argument` (`.B`, `.SS`) is one line, and a double quote in it is `\(dq`.
    public static func escape(_ text: String, argument: Bool = false) -> String {
        var out = ""
        var lineStart = true
        for character in text {
            if lineStart, character == "." || character == "'" { out += "\\&" }
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\"" where argument: out += "\\(dq"
            case "\n" where argument: out += " "
            default:
                // Beyond ASCII by code point (`\[u2026]`): the page reads the same whatever
                // encoding groff assumes.
                for scalar in character.unicodeScalars {
                    out += scalar.isASCII ? String(scalar) : "\\[u\(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4))]"
                }
            }
            lineStart = character == "\n"
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count < width ? String(repeating: "0", count: width - count) + self : self
    }
}
