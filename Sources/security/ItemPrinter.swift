import FoundationEssentials
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Prints items in the block format of macOS's `security` tool.
enum ItemPrinter {
    /// macOS's attribute lines for a generic password, in its order: the label as
    /// attribute 7, the unused attribute 8, then the four-letter attributes alphabetically.
    private static let genericPasswordLines: [(name: String, display: String, kind: String)] = [
        ("labl", "0x00000007 ", "blob"), ("", "0x00000008 ", "blob"),
        ("acct", "\"acct\"", "blob"), ("cdat", "\"cdat\"", "timedate"), ("crtr", "\"crtr\"", "uint32"),
        ("cusi", "\"cusi\"", "sint32"), ("desc", "\"desc\"", "blob"), ("gena", "\"gena\"", "blob"),
        ("icmt", "\"icmt\"", "blob"), ("invi", "\"invi\"", "sint32"), ("mdat", "\"mdat\"", "timedate"),
        ("nega", "\"nega\"", "sint32"), ("prot", "\"prot\"", "blob"), ("scrp", "\"scrp\"", "sint32"),
        ("svce", "\"svce\"", "blob"), ("type", "\"type\"", "uint32"),
    ]

    static func block(attributes: [String: KeychainValue], keychainPath: String) -> String {
        var out = "keychain: \"\(keychainPath)\"\nversion: 512\nclass: \"genp\"\nattributes:\n"
        for line in genericPasswordLines {
            out += "    \(line.display)<\(line.kind)>=\(format(attributes[line.name], kind: line.kind))\n"
        }
        return out
    }

    static func format(_ value: KeychainValue?, kind: String) -> String {
        switch value {
        case nil: return "<NULL>"
        case .string(let s)?: return quotedOrHex(Array(s.utf8))
        case .data(let d)?: return quotedOrHex(Array(d))
        case .bool(let b)?: return b ? "1" : "0"
        case .number(let n)?:
            // Creator and type codes print as their four characters.
            if kind == "uint32", n >= 0, n <= Int64(UInt32.max) {
                return quotedOrHex((0..<4).map { UInt8(truncatingIfNeeded: n >> (24 - 8 * $0)) })
            }
            return String(n)
        case .date(let date)?:
            return quotedOrHex(Array(timestamp(date).utf8) + [0])
        default: return "<NULL>"
        }
    }

    /// `"text"` when every byte is printable ASCII, else `0xHEX  "octal-escaped"`.
    static func quotedOrHex(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
        }
        return "0x" + hex(bytes) + "  \"" + escaped(bytes) + "\""
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    static func escaped(_ bytes: [UInt8]) -> String {
        bytes.map { byte -> String in
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "\"") {
                return String(UnicodeScalar(byte))
            }
            let octal = String(byte, radix: 8)
            return "\\" + String(repeating: "0", count: 3 - octal.count) + octal
        }.joined()
    }

    /// `YYYYMMDDhhmmssZ` in UTC, the form of macOS's timedate attributes.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// A password as `-w` prints it: the text, or hex when it is not printable.
    static func passwordForW(_ bytes: [UInt8]) -> String {
        bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? String(decoding: bytes, as: UTF8.self) : hex(bytes).lowercased()
    }
}
