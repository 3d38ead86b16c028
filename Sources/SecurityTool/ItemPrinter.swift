import FoundationEssentials
import KeychainCertificates
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Items in the block format of macOS's `security` tool:
///
///     keychain: "/home/alice/.local/share/trousseau/keychain.db"
///     version: 512
///     class: "genp"
///     attributes:
///         0x00000007 <blob>="example.com"
///         "acct"<blob>="alice"
///         …
///
/// One line per attribute of the class's record, in the order of macOS's schema, each
/// value through ``ItemPrinter/buffer(_:)``.
enum ItemPrinter {
    /// The attribute formats of macOS's records.
    enum Format: String {
        case blob, timedate, uint32, sint32
    }

    /// One attribute line: the tag as printed (`0x00000007 ` or `"acct"`), the format, and
    /// the attribute it shows.
    struct Line {
        var tag: String
        var format: Format
        var attribute: String?
        /// Shown as zero when the item has none (the port and protocol of an internet
        /// password, which macOS's records always hold).
        var zeroWhenAbsent = false

        init(_ attribute: String, _ format: Format, zeroWhenAbsent: Bool = false) {
            tag = "\"\(attribute)\""
            self.format = format
            self.attribute = attribute
            self.zeroWhenAbsent = zeroWhenAbsent
        }

        init(tag: String, _ format: Format, attribute: String?) {
            self.tag = tag
            self.format = format
            self.attribute = attribute
        }
    }

    /// The label is attribute 7 of macOS's records; attribute 8 (the alias) has no
    /// counterpart here and prints as absent.
    private static let leading = [
        Line(tag: "0x00000007 ", .blob, attribute: "labl"), Line(tag: "0x00000008 ", .blob, attribute: nil),
    ]

    static let genericPassword: [Line] = leading + [
        Line("acct", .blob), Line("cdat", .timedate), Line("crtr", .uint32), Line("cusi", .sint32),
        Line("desc", .blob), Line("gena", .blob), Line("icmt", .blob), Line("invi", .sint32),
        Line("mdat", .timedate), Line("nega", .sint32), Line("prot", .blob), Line("scrp", .sint32),
        Line("svce", .blob), Line("type", .uint32),
    ]

    static let internetPassword: [Line] = leading + [
        Line("acct", .blob), Line("atyp", .blob), Line("cdat", .timedate), Line("crtr", .uint32),
        Line("cusi", .sint32), Line("desc", .blob), Line("icmt", .blob), Line("invi", .sint32),
        Line("mdat", .timedate), Line("nega", .sint32), Line("path", .blob),
        Line("port", .uint32, zeroWhenAbsent: true), Line("prot", .blob),
        Line("ptcl", .uint32, zeroWhenAbsent: true), Line("scrp", .sint32), Line("sdmn", .blob),
        Line("srvr", .blob), Line("type", .uint32),
    ]

    /// A certificate's block, as `find-certificate` prints it: class 0x80001000 and the
    /// attributes of macOS's certificate records. (Not compared with a macOS run: the
    /// attribute names and formats are from its CSSM schema; the subject and issuer are the
    /// DER names.)
    static func certificateBlock(_ item: [String: KeychainValue], _ certificate: CertificateFields, keychainPath: String) -> String {
        var fields = item
        fields["alis"] = certificate.emailAddresses.first.map { .string($0) }
        fields["hpky"] = item["pkhh"]
        fields["issu"] = .data(Data(certificate.issuer.encoded))
        fields["subj"] = .data(Data(certificate.subject.encoded))
        fields["snbr"] = item["slnr"]
        let lines = [
            Line("alis", .blob), Line("cenc", .uint32), Line("ctyp", .uint32), Line("hpky", .blob), Line("issu", .blob),
            Line("labl", .blob), Line("skid", .blob), Line("snbr", .blob), Line("subj", .blob),
        ]
        var out = "keychain: \(buffer(Array(keychainPath.utf8)))\nversion: 512\nclass: 0x80001000 \nattributes:\n"
        for line in lines { out += "    \(line.tag)<\(line.format.rawValue)>=\(value(fields[line.attribute ?? ""], line))\n" }
        return out
    }

    /// The block of one item; with `data`, followed by `data:` and the item's secret, as
    /// `dump-keychain -d` prints it.
    static func block(_ item: [String: KeychainValue], of passwordClass: PasswordClass, keychainPath: String, data: [UInt8]? = nil) -> String {
        var out = "keychain: \(buffer(Array(keychainPath.utf8)))\nversion: 512\nclass: \(buffer(Array(passwordClass.code.utf8)))\nattributes:\n"
        for line in passwordClass == .generic ? genericPassword : internetPassword {
            out += "    \(line.tag)<\(line.format.rawValue)>=\(value(line.attribute.flatMap { item[$0] }, line))\n"
        }
        out += secretServiceLines(item)
        if let data { out += "data:\n\(buffer(data))\n" }
        return out
    }

    /// An item of the freedesktop Secret Service: its scope's access group, content type and
    /// arbitrary attributes (which no catalogue line shows), sorted by name.
    private static func secretServiceLines(_ item: [String: KeychainValue]) -> String {
        guard case .data(let blob)? = item[SecretServiceItem.attributeName],
            let (attributes, contentType) = try? SecretServiceItem.decode(blob)
        else { return "" }
        let group = item[ItemSchema.Name.accessGroup]?.stringValue ?? ""
        var out = "secret service: access group \(buffer(Array(group.utf8))), content type \(buffer(Array(contentType.utf8)))\n"
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            out += "    \(buffer(Array(name.utf8)))=\(buffer(Array(value.utf8)))\n"
        }
        return out
    }

    private static func value(_ value: KeychainValue?, _ line: Line) -> String {
        let bytes: [UInt8]
        switch (value, line.format) {
        case (.string(let text)?, _): bytes = Array(text.utf8)
        case (.data(let data)?, _): bytes = Array(data)
        case (.date(let date)?, _): bytes = Array(timestamp(date).utf8) + [0]
        case (.number(let number)?, .uint32), (.number(let number)?, .sint32): bytes = bigEndian(UInt32(truncatingIfNeeded: number))
        case (.bool(let flag)?, .uint32), (.bool(let flag)?, .sint32): bytes = bigEndian(flag ? 1 : 0)
        case (nil, _) where line.zeroWhenAbsent: bytes = bigEndian(0)
        default: return "<NULL>"
        }
        return bytes.isEmpty ? "<NULL>" : buffer(bytes)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    /// Bytes as macOS's tool prints any buffer: printable ASCII other than backslash in
    /// quotes; when any byte is not, `0x` and the bytes in upper-case hex first, then —
    /// when some bytes are printable — two spaces and the quoted copy with the others as
    /// octal escapes (`0x00FF41  "\000\377A"`); only hex, and one space, when none is.
    static func buffer(_ bytes: [UInt8]) -> String {
        let plain = bytes.contains { isPlain($0) }
        let special = bytes.contains { !isPlain($0) }
        var out = ""
        if special { out += "0x" + Hexadecimal.string(bytes, uppercase: true) + (plain ? "  " : " ") }
        if plain {
            out += "\"" + bytes.map { byte in
                guard !isPlain(byte) else { return String(UnicodeScalar(byte)) }
                return "\\" + String(byte >> 6 & 7) + String(byte >> 3 & 7) + String(byte & 7)
            }.joined() + "\""
        }
        return out
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "\\")
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

    /// A password as `-w` prints it: the bytes when every one is printable (isprint), else
    /// lower-case hex.
    static func passwordForW(_ bytes: [UInt8]) -> [UInt8] {
        bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? bytes : Array(Hexadecimal.string(bytes).utf8)
    }
}
