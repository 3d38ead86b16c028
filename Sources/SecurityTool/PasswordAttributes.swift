import FoundationEssentials
import KeychainModel

/// The two classes the password commands work on, and what differs between them.
enum PasswordClass {
    case generic, internet

    var itemClass: ItemClass { self == .generic ? .genericPassword : .internetPassword }

    /// The class as macOS prints it (`class: "genp"`).
    var code: String { itemClass.rawValue }

    /// Where the `-s` flag goes: the service of a generic password, the server of an
    /// internet one.
    var serviceAttribute: String { self == .generic ? "svce" : "srvr" }
}

/// The attribute flags of macOS's password commands, read from their options:
/// `-a account -s service|server -l label -j comment -D kind -c creator -C type`, `-G value`
/// for generic passwords, `-d domain -p path -P port -r protocol -t authType` for internet
/// ones, and Trousseau's `--access-group` and `--synchronizable`.
struct PasswordAttributes {
    let passwordClass: PasswordClass
    var account: String?
    var service: String?
    var label: String?
    var comment: String?
    var kind: String?
    var genericValue: String?
    var creator: UInt32 = 0
    var type: UInt32 = 0
    var securityDomain: String?
    var path: String?
    var port: UInt16 = 0
    var protocolCode: UInt32 = 0
    var authenticationType: UInt32 = 0
    var accessGroup: String?
    /// `--synchronizable`: the item is (or is to be) synchronizable, part of its primary key
    /// as on Apple's platforms; without it the commands reach local items only.
    var synchronizable = false

    init(_ passwordClass: PasswordClass) {
        self.passwordClass = passwordClass
    }

    /// Takes `option` when it is an attribute flag. Returns false for other options, and
    /// throws the status to exit with when its value is malformed (reported already).
    mutating func take(_ option: OptionParser.Option) throws(ToolFailure) -> Bool {
        let value = option.value ?? ""
        switch (option.name, passwordClass) {
        case ("a", _): account = value
        case ("s", _): service = value
        case ("l", _): label = value
        case ("j", _): comment = value
        case ("D", _): kind = value
        case ("c", _): creator = try Self.fourCharacterCode(value)
        case ("C", _): type = try Self.fourCharacterCode(value)
        case ("access-group", _): accessGroup = value
        case ("synchronizable", _): synchronizable = true
        case ("G", .generic): genericValue = value
        case ("d", .internet): securityDomain = value
        case ("p", .internet): path = value
        case ("P", .internet): port = UInt16(truncatingIfNeeded: Self.atoi(value))
        case ("r", .internet): protocolCode = try Self.fourCharacterCode(value)
        case ("t", .internet): authenticationType = try Self.fourCharacterCode(value)
        default: return false
        }
        return true
    }

    /// Whether no attribute was named (a delete then shows its usage). `--synchronizable`
    /// says which items, not which item: alone it names none.
    var isEmpty: Bool {
        var named = changes()
        named[SecName.kSecAttrSynchronizable] = nil
        return named.isEmpty && accessGroup == nil
    }

    /// Whether the flags name the class's whole primary key; macOS's tool then searches by
    /// it alone, ignoring the descriptive flags (so `-U` can change them).
    private var namesPrimaryKey: Bool {
        switch passwordClass {
        case .generic: account != nil && service != nil
        case .internet:
            account != nil && securityDomain != nil && service != nil && protocolCode != 0 && authenticationType != 0
                && port != 0 && path != nil
        }
    }

    /// The query for the first item these flags match, as macOS's `find_first_…_password`
    /// builds it.
    func searchQuery() -> [String: KeychainValue] {
        var query: [String: KeychainValue] = [QueryKey.itemClass: .string(passwordClass.code)]
        if !namesPrimaryKey { descriptive(into: &query) }
        identifying(into: &query)
        if let accessGroup { query[ItemSchema.Name.accessGroup] = .string(accessGroup) }
        return query
    }

    /// The attributes of a new item: every one named, and the access group.
    func newItem() -> [String: KeychainValue] {
        searchQuery().merging(changes()) { _, new in new }
    }

    /// The attributes an update (`-U`) sets: every one named.
    func changes() -> [String: KeychainValue] {
        var changes: [String: KeychainValue] = [:]
        descriptive(into: &changes)
        identifying(into: &changes)
        return changes
    }

    private func descriptive(into query: inout [String: KeychainValue]) {
        if creator != 0 { query["crtr"] = .number(Int64(creator)) }
        if type != 0 { query["type"] = .number(Int64(type)) }
        if let kind { query["desc"] = .string(kind) }
        if let genericValue { query["gena"] = .data(Data(genericValue.utf8)) }
        if let comment { query["icmt"] = .string(comment) }
        if let label { query["labl"] = .string(label) }
    }

    private func identifying(into query: inout [String: KeychainValue]) {
        if let service { query[passwordClass.serviceAttribute] = .string(service) }
        if let securityDomain { query["sdmn"] = .string(securityDomain) }
        if let account { query["acct"] = .string(account) }
        if let path { query["path"] = .string(path) }
        if port != 0 { query["port"] = .number(Int64(port)) }
        if protocolCode != 0 { query["ptcl"] = .string(Self.text(protocolCode)) }
        if authenticationType != 0 { query["atyp"] = .string(Self.text(authenticationType)) }
        if synchronizable { query[SecName.kSecAttrSynchronizable] = .bool(true) }
    }

    /// A four-character code ("aapl", "htps") as its 32-bit value; anything else is
    /// refused with macOS's message and status 1.
    static func fourCharacterCode(_ text: String) throws(ToolFailure) -> UInt32 {
        let bytes = Array(text.utf8)
        guard bytes.count == 4 else {
            ToolOutput.error("Error: four-character types must be exactly 4 characters long.\n")
            if bytes.count == 3 { ToolOutput.error("(Try \"\(text) \" instead of \"\(text)\")\n") }
            throw ToolFailure(status: 1)
        }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The code's four characters, as protocols and authentication types are stored.
    static func text(_ code: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: code >> (24 - 8 * $0)) }, as: UTF8.self)
    }

    /// C's atoi: leading blanks, a sign, then digits; 0 when there are none.
    static func atoi(_ text: String) -> Int64 {
        var characters = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }[...]
        var sign: Int64 = 1
        if let first = characters.first, first == "-" || first == "+" {
            if first == "-" { sign = -1 }
            characters = characters.dropFirst()
        }
        var value: Int64 = 0
        for character in characters {
            guard let digit = character.wholeNumberValue, character.isASCII else { break }
            value = value &* 10 &+ Int64(digit)
        }
        return sign &* value
    }
}

/// A command's early exit with `status`, its message already written.
struct ToolFailure: Error {
    let status: Int32
}
