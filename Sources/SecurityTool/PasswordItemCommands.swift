import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainProtocol

/// `add-`, `find-` and `delete-generic-password` and their internet-password twins, with
/// macOS's flags, output, messages and statuses.
enum PasswordItemCommands {
    /// Trousseau's long options (the access group, a synchronizable item), each mapped to
    /// whether it takes a value.
    private static let itemOptions = ["access-group": true, "synchronizable": false]

    // MARK: add

    static func add(_ passwordClass: PasswordClass, _ arguments: [String], _ session: ToolSession) -> Int32 {
        var attributes = PasswordAttributes(passwordClass)
        if passwordClass == .internet { attributes.authenticationType = 0x6466_6C74 }  // "dflt", as macOS's tool
        var password: SecretBytes?
        var update = false
        let operands: [String]
        do {
            let parsed = try addParser(passwordClass).parse(arguments.dropFirst())
            for option in parsed.options {
                if option.value == nil, option.name == "w" || option.name == "p" {
                    // -w (or -p) as the last argument, without a value: ask for the password, twice.
                    guard let prompted = promptForNewPassword() else { return 1 }
                    password = prompted
                    continue
                }
                if try attributes.take(option) { continue }
                switch option.name {
                case "w", "p": password = SecretBytes((option.value ?? "").utf8)
                case "X":
                    guard let bytes = hexadecimal(option.value ?? "") else {
                        ToolOutput.report("Unable to convert password data (-X must specify valid hex digits)")
                        return ToolCommand.showUsage
                    }
                    password = SecretBytes(bytes)
                case "U": update = true
                case "A", "T": break  // access is by access group here; accepted as macOS's scripts pass them
                default: return ToolCommand.showUsage
                }
            }
            operands = parsed.operands
        } catch let failure as ToolFailure {
            return failure.status
        } catch {
            return ToolCommand.showUsage
        }
        guard attributes.account != nil, attributes.service != nil, operands.count <= 1, operands.first != "" else {
            return ToolCommand.showUsage
        }
        let keychainName = operands.first
        if attributes.label == nil { attributes.label = attributes.service }
        let function =
            passwordClass == .generic
            ? "SecKeychainItemCreateFromContent (\(keychainName ?? "<default>"))"
            : "SecKeychainAddInternetPassword \(keychainName ?? "<NULL>")"
        var item = attributes.newItem()
        item[QueryKey.valueData] = .data(password?.withUnsafeBytes { Data($0) } ?? Data())
        do throws(KeychainError) {
            var target = keychainName.map(session.resolve)
            if target == nil { target = try session.defaultKeychain() }
            let keychain = target ?? .login
            if keychain.isReadOnly { throw KeychainError(status: .readOnly) }
            return try session.scoped(to: keychain) { () throws(KeychainError) -> Int32 in
                if update, updateFirst(matching: attributes, password: password, session) { return 0 }
                try session.call(Service.Add(item))
                return 0
            }
        } catch {
            ToolOutput.report(function, error)
            return error.status.rawValue
        }
    }

    /// The add commands' options, parsed silently as macOS's `:` specification does.
    private static func addParser(_ passwordClass: PasswordClass) -> OptionParser {
        let specification = passwordClass == .generic ? ":a:c:C:D:G:j:l:s:p:w:X:UAT:h" : ":a:c:C:d:D:j:l:p:P:r:s:t:w:X:UAT:h"
        return OptionParser(specification, longOptions: itemOptions, valueMayBeMissing: ["w", "p"])
    }

    /// An add command's words with the password values (`-w`, `-X`, and the generic
    /// command's `-p`) hidden, for `-v`'s echo: `security -i` keeps a secret out of the
    /// argument list, and the echo must not put it on standard error instead.
    static func hidingPasswords(_ passwordClass: PasswordClass, _ words: [String]) -> [String] {
        let secret: Set<String> = passwordClass == .generic ? ["w", "p", "X"] : ["w", "X"]
        guard let parsed = try? addParser(passwordClass).parse(words.dropFirst()) else {
            return Array(words.prefix(1)) + words.dropFirst().map { _ in "<hidden>" }
        }
        var hidden = words
        for option in parsed.options where secret.contains(option.name) {
            guard let value = option.value, let index = option.valueWord else { continue }
            hidden[index] = String(hidden[index].dropLast(value.count)) + "<hidden>"
        }
        return hidden
    }

    /// `-U`: changes the first item matching, as macOS's tool does; false when there is
    /// none (or the change failed, reported), and the item is then added.
    private static func updateFirst(matching attributes: PasswordAttributes, password: SecretBytes?, _ session: ToolSession) -> Bool {
        do {
            guard let found = try first(matching: attributes.searchQuery(), withData: false, session),
                let reference = found[QueryKey.valuePersistentRef]
            else { return false }
            var changes = attributes.changes()
            if let password { changes[QueryKey.valueData] = .data(password.withUnsafeBytes { Data($0) }) }
            try session.call(Service.Update(byReference(reference), attributes: changes))
            return true
        } catch {
            if error.status != OSStatusCode.itemNotFound { ToolOutput.report("SecKeychainItemModifyContent", error) }
            return false
        }
    }

    /// The query for the item `reference` names, synchronizable or not (a query that does
    /// not say reaches local items only, as on Apple's platforms).
    private static func byReference(_ reference: KeychainValue) -> [String: KeychainValue] {
        [QueryKey.valuePersistentRef: reference, ItemSchema.Name.synchronizable: .string(QueryKey.synchronizableAny)]
    }

    /// The new item's password from the terminal (or standard input), typed twice; three
    /// tries. Nil when input ends or the entries never match.
    private static func promptForNewPassword() -> SecretBytes? {
        for _ in 0..<3 {
            guard let first = PasswordPrompt.read("password data for new item: "),
                let second = PasswordPrompt.read("retype password for new item: ")
            else { return nil }
            if first.isEqual(to: second) { return first }
            ToolOutput.error("passwords don't match\n")
        }
        return nil
    }

    /// Hexadecimal digits as bytes, an odd count padded with a leading zero digit; nil when
    /// a character is not a hex digit.
    static func hexadecimal(_ text: String) -> [UInt8]? {
        Hexadecimal.bytes(text.utf8.count % 2 == 1 ? "0" + text : text)
    }

    // MARK: find and delete

    static func find(_ passwordClass: PasswordClass, _ arguments: [String], _ session: ToolSession) -> Int32 {
        let specification = passwordClass == .generic ? "ha:c:C:D:G:j:l:s:wg" : "ha:c:C:d:D:hgj:l:p:P:r:s:wt:"
        var attributes = PasswordAttributes(passwordClass)
        var showPassword = false, passwordOnly = false
        let operands: [String]
        switch parseMatch(arguments, specification, into: &attributes, other: { name in
            switch name {
            case "g": showPassword = true
            case "w": passwordOnly = true
            default: return false
            }
            return true
        }) {
        case .success(let words): operands = words
        case .failure(let failure): return failure.status
        }
        let found: [String: KeychainValue]
        let keychain: KeychainName
        do throws(KeychainError) {
            guard let item = try session.firstFound(in: operands, { () throws(KeychainError) in
                try first(matching: attributes.searchQuery(), withData: showPassword || passwordOnly, session)
            }) else { throw KeychainError.itemNotFound }
            (found, keychain) = item
        } catch {
            ToolOutput.report("SecKeychainSearchCopyNext", error)
            return error.status.rawValue
        }
        let secret = Array(found[QueryKey.valueData]?.dataValue ?? Data())
        if passwordOnly {
            ToolOutput.print(bytes: ItemPrinter.passwordForW(secret) + [UInt8(ascii: "\n")])
            return 0
        }
        ToolOutput.print(ItemPrinter.block(found, of: passwordClass, keychainPath: keychain.path(session.paths)))
        if showPassword { ToolOutput.error("password: \(ItemPrinter.buffer(secret))\n") }
        return 0
    }

    static func delete(_ passwordClass: PasswordClass, _ arguments: [String], _ session: ToolSession) -> Int32 {
        let specification = passwordClass == .generic ? "ha:c:C:D:G:j:l:s:g" : "ha:c:C:d:D:hgj:l:p:P:r:s:t:"
        var attributes = PasswordAttributes(passwordClass)
        let operands: [String]
        switch parseMatch(arguments, specification, into: &attributes, other: { _ in false }) {
        case .success(let words): operands = words
        case .failure(let failure): return failure.status
        }
        guard !attributes.isEmpty else { return ToolCommand.showUsage }
        do throws(KeychainError) {
            guard let (found, keychain) = try session.firstFound(in: operands, { () throws(KeychainError) in
                try first(matching: attributes.searchQuery(), withData: false, session)
            }), let reference = found[QueryKey.valuePersistentRef]
            else { throw KeychainError.itemNotFound }
            ToolOutput.print(ItemPrinter.block(found, of: passwordClass, keychainPath: keychain.path(session.paths)))
            // Like macOS, delete the first match only.
            _ = try session.scoped(to: keychain) { () throws(KeychainError) in
                try session.call(Service.Delete(byReference(reference)))
            }
            ToolOutput.error("password has been deleted.\n")
            return 0
        } catch {
            ToolOutput.report("SecKeychainSearchCopyNext", error)
            return error.status.rawValue
        }
    }

    /// Parses a find or delete command's options: attribute flags into `attributes`, any
    /// other to `other` (false: a usage error). The operands, or the status to exit with.
    private static func parseMatch(
        _ arguments: [String], _ specification: String, into attributes: inout PasswordAttributes, other: (String) -> Bool
    ) -> Result<[String], ToolFailure> {
        do {
            let parsed = try OptionParser(specification, longOptions: itemOptions).parse(arguments.dropFirst())
            for option in parsed.options where !(try attributes.take(option)) {
                guard other(option.name) else { return .failure(ToolFailure(status: ToolCommand.showUsage)) }
            }
            return .success(parsed.operands)
        } catch let failure as ToolFailure {
            return .failure(failure)
        } catch {
            return .failure(ToolFailure(status: ToolCommand.showUsage))
        }
    }

    /// The first item `query` matches, with its attributes and persistent reference (and
    /// its data when asked); nil when there is none.
    private static func first(matching query: [String: KeychainValue], withData: Bool, _ session: ToolSession) throws(KeychainError) -> [String: KeychainValue]? {
        var query = query
        query[QueryKey.returnAttributes] = .bool(true)
        query[QueryKey.returnPersistentRef] = .bool(true)
        if withData { query[QueryKey.returnData] = .bool(true) }
        do {
            guard case .dictionary(let item)? = try session.call(Service.CopyMatching(query)) else { return nil }
            return item
        } catch where error.status == OSStatusCode.itemNotFound {
            return nil
        }
    }
}
