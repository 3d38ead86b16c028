import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeychainClient

struct AddGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-generic-password",
        abstract: "Add a generic password item.")

    @OptionGroup var attributes: GenericPasswordAttributes

    @Option(name: .customShort("w"), help: "Specify password to be added. Command-line arguments are visible to other processes; prefer -X from a file or the Security API for real secrets.")
    var password: String?

    @Option(name: .customShort("X"), help: "Specify password data to be added as a hexadecimal string.")
    var hexPassword: String?

    @Flag(name: .customShort("U"), help: "Update item if it already exists (if omitted, the item cannot already exist).")
    var updateIfExists = false

    @Flag(name: .customShort("A"), help: "Allow any application to access this item without warning (accepted for compatibility).")
    var allowAnyApplication = false

    @Option(name: .customShort("T"), help: "Specify an application which may access this item (accepted for compatibility).")
    var trustedApplications: [String] = []

    func run() throws {
        var query = try attributes.query()
        if attributes.label == nil, let service = attributes.service { query["labl"] = .string(service) }
        query["v_Data"] = .data(try secret())
        do {
            let keychain = try KeychainLocation.connect()
            do {
                try keychain.callWithPresence(.add(query))
            } catch let error as KeychainError where error == .duplicateItem && updateIfExists {
                var match: [String: KeychainValue] = ["class": query["class"]!]  // set by attributes.query()
                match["acct"] = .string(attributes.account ?? "")
                match["svce"] = .string(attributes.service ?? "")
                var changes = query
                changes["class"] = nil
                try keychain.callWithPresence(.update(match, attributes: changes))
            }
        } catch {
            throw fail("SecKeychainItemCreateFromContent (<default>)", error)
        }
    }

    private func secret() throws -> Data {
        if let hexPassword {
            guard hexPassword.count % 2 == 0, let bytes = Self.bytes(fromHex: hexPassword) else {
                throw ValidationError("-X expects an even number of hexadecimal digits")
            }
            return Data(bytes)
        }
        return Data((password ?? "").utf8)
    }

    static func bytes(fromHex hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = hex.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let byte = UInt8(String([high, low]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

struct FindGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find-generic-password",
        abstract: "Find a generic password item.")

    @OptionGroup var attributes: GenericPasswordAttributes

    @Flag(name: .customShort("g"), help: "Display the password for the item found.")
    var showPassword = false

    @Flag(name: .customShort("w"), help: "Display only the password on stdout.")
    var onlyPassword = false

    func run() throws {
        var query = try attributes.query()
        query["r_Attributes"] = .bool(true)
        query["r_Data"] = .bool(showPassword || onlyPassword)
        let found: [String: KeychainValue]
        do {
            guard case .dictionary(let item)? = try KeychainLocation.connect().callWithPresence(.copyMatching(query)) else {
                throw KeychainError.itemNotFound
            }
            found = item
        } catch {
            throw fail("SecKeychainSearchCopyNext", error)
        }
        let secret = Array(found["v_Data"]?.dataValue ?? Data())
        if onlyPassword {
            print(ItemPrinter.passwordForW(secret))
            return
        }
        print(ItemPrinter.block(attributes: found, keychainPath: KeychainLocation.databasePath), terminator: "")
        if showPassword {
            writeToStandardError("password: \(ItemPrinter.quotedOrHex(secret))\n")
        }
    }
}

struct DeleteGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-generic-password",
        abstract: "Delete a generic password item.")

    @OptionGroup var attributes: GenericPasswordAttributes

    func run() throws {
        var query = try attributes.query()
        query["r_Attributes"] = .bool(true)
        query["r_PersistentRef"] = .bool(true)
        let found: [String: KeychainValue]
        do {
            let keychain = try KeychainLocation.connect()
            guard case .dictionary(let item)? = try keychain.copyMatching(query),
                let reference = item["v_PersistentRef"]
            else {
                throw KeychainError.itemNotFound
            }
            // Like macOS, delete the first match only.
            try keychain.callWithPresence(.delete(["v_PersistentRef": reference]))
            found = item
        } catch {
            throw fail("SecKeychainSearchCopyNext", error)
        }
        print(ItemPrinter.block(attributes: found, keychainPath: KeychainLocation.databasePath), terminator: "")
        writeToStandardError("password has been deleted.\n")
    }
}
