import ArgumentParser
import FoundationEssentials
import KeychainModel

/// The attribute flags macOS's password commands share.
struct GenericPasswordAttributes: ParsableArguments {
    @Option(name: .customShort("a"), help: "Match/set the account name.")
    var account: String?

    @Option(name: .customShort("s"), help: "Match/set the service name.")
    var service: String?

    @Option(name: .customShort("l"), help: "Match/set the label (defaults to the service name on add).")
    var label: String?

    @Option(name: .customShort("j"), help: "Match/set the comment.")
    var comment: String?

    @Option(name: .customShort("D"), help: "Match/set the kind (description).")
    var kind: String?

    @Option(name: .customShort("G"), help: "Match/set the generic attribute value.")
    var genericAttribute: String?

    @Option(name: .customShort("c"), help: "Match/set the creator (a four-character code).")
    var creator: String?

    @Option(name: .customShort("C"), help: "Match/set the type (a four-character code).")
    var type: String?

    /// The attributes these flags name, as a `SecItem` dictionary.
    func query() throws -> [String: KeychainValue] {
        var query: [String: KeychainValue] = ["class": .string(ItemClass.genericPassword.rawValue)]
        if let account { query["acct"] = .string(account) }
        if let service { query["svce"] = .string(service) }
        if let label { query["labl"] = .string(label) }
        if let comment { query["icmt"] = .string(comment) }
        if let kind { query["desc"] = .string(kind) }
        if let genericAttribute { query["gena"] = .data(Data(genericAttribute.utf8)) }
        if let creator { query["crtr"] = .number(try Self.fourCharacterCode(creator)) }
        if let type { query["type"] = .number(try Self.fourCharacterCode(type)) }
        return query
    }

    /// A four-character code as the 32-bit number Apple stores, "aapl" → 0x6161706C.
    static func fourCharacterCode(_ text: String) throws -> Int64 {
        let bytes = Array(text.utf8)
        guard bytes.count == 4 else {
            throw ValidationError("a four-character code is exactly four characters: \(text)")
        }
        return bytes.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}
