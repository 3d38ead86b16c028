import FoundationEssentials
import KeychainCertificates
import KeychainClient
import KeychainImport
import KeychainKeys
import KeychainModel
import KeychainProtocol
import SwiftASN1

/// `import` and `export` (`keychain_import.c`, `keychain_export.m`): certificates, private
/// keys and identities in and out of the keychain, in the files people have — PKCS#12
/// (securityd opens and writes it with OpenSSL), PEM, DER.
enum ImportExportCommands {
    /// `import inputfile [-k keychain] [-t type] [-f format] [-w] [-x] [-P passphrase]
    /// [-a name value] [-A] [-T appPath]...`. The format comes from the content unless `-f`
    /// names it (fastlane imports PEM keys from files named `.p12`). Prints what it added as
    /// macOS does; with `-f pkcs12`, nothing (macOS's tool counts only the typed items
    /// `SecKeychainItemImport` returns, and `SecPKCS12Import` returns dictionaries).
    /// `-A`, `-T` and `-w` are accepted: there are no per-application ACLs on file keys here
    /// (docs/ARCHITECTURE.md); `-x` makes the keys not extractable.
    static func importItems(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard arguments.count >= 2, !(arguments.count == 2 && arguments[1].hasPrefix("-")) else { return ToolCommand.showUsage }
        let file = arguments[1]
        // `-a name value`: getopt takes the name, the tool the next word as its value.
        var words = Array(arguments.dropFirst(2))
        while let index = words.firstIndex(of: "-a") {
            guard index + 2 < words.count else { return ToolCommand.showUsage }
            words.removeSubrange(index...(index + 2))
        }
        guard let parsed = try? OptionParser("k:t:f:P:wxhAT:").parse(words[...]), parsed.operands.isEmpty,
            !parsed.options.contains(where: { $0.name == "h" })
        else { return ToolCommand.showUsage }
        var format: String?
        var passphrase: SecretBytes?
        var extractable = true
        var keychain: KeychainName?
        for option in parsed.options {
            switch option.name {
            case "k":
                let named = session.resolve(option.value ?? "")
                if named.isReadOnly {
                    ToolOutput.report("SecKeychainItemImport", status: .readOnly)
                    return 1
                }
                keychain = named
            case "t":
                guard ["pub", "priv", "session", "cert", "agg"].contains(option.value ?? "") else { return ToolCommand.showUsage }
            case "f":
                let formats = ["openssl", "openssh1", "openssh2", "bsafe", "raw", "pkcs7", "pkcs8", "pkcs12", "netscape", "x509", "pemseq"]
                guard let value = option.value, formats.contains(value) else { return ToolCommand.showUsage }
                format = value
            case "P": passphrase = SecretBytes(Array((option.value ?? "").utf8))
            case "x": extractable = false
            default: break
            }
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            ToolOutput.report("Error reading infile \(file): No such file or directory")
            return 1
        }
        let isPKCS12 = format == "pkcs12" || (format == nil && ImportedItems.looksLikePKCS12(data))
        let contents: ImportedItems
        do throws(KeychainError) {
            if isPKCS12 {
                let password = passphrase ?? PasswordPrompt.read("Enter the password for \"\(file.split(separator: "/").last.map(String.init) ?? file)\": ") ?? SecretBytes([])
                contents = try ImportedItems(pkcs12: session.call(Service.DecodePKCS12(file: data, passphrase: password)))
            } else {
                contents = try ImportedItems(reading: data)
            }
        } catch {
            ToolOutput.report("SecKeychainItemImport", error)
            return 1
        }
        let counts: ImportedItems.Counts
        do throws(KeychainError) {
            var target = keychain
            if target == nil { target = try session.defaultKeychain() }
            counts = try session.scoped(to: target ?? .login) { () throws(KeychainError) in
                try contents.add(extractable: extractable) { (request) throws(KeychainError) in _ = try session.call(request) }
            }
        } catch {
            ToolOutput.report("SecKeychainItemImport", error)
            return 1
        }
        if format != "pkcs12" {
            for (count, one, many) in [(counts.identities, "identity", "identities"), (counts.keys, "key", "keys"), (counts.certificates, "certificate", "certificates")]
            where count > 0 {
                ToolOutput.print("\(count) \(count > 1 ? many : one) imported.\n")
            }
        }
        return 0
    }

    /// The words `-v` echoes, the passphrase hidden.
    static func hidingPassphrase(_ words: [String]) -> [String] {
        var hidden = words
        for index in hidden.indices.dropFirst() where hidden[index - 1] == "-P" { hidden[index] = "<hidden>" }
        for index in hidden.indices where hidden[index].hasPrefix("-P") && hidden[index].count > 2 { hidden[index] = "-P<hidden>" }
        return hidden
    }
}

extension ImportExportCommands {
    /// `export [-k keychain] [-t type] [-f format] [-w] [-p] [-P passphrase] [-o outfile]`:
    /// certificates as DER (`x509`, one) or PEM (`pemseq`, `-p`); private keys only inside a
    /// PKCS#12 file (`-f pkcs12`), with their certificates when they are identities. A
    /// PKCS#12 file holds one private key here (OpenSSL's writer); other formats for keys are
    /// errSecUnimplemented (docs/ARCHITECTURE.md).
    static func exportItems(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("k:o:t:f:P:wph").parse(arguments.dropFirst()), parsed.operands.isEmpty,
            !parsed.options.contains(where: { $0.name == "h" })
        else { return ToolCommand.showUsage }
        var type = "all"
        var format: String?
        var pem = false
        var passphrase: SecretBytes?
        var output: String?
        for option in parsed.options {
            switch option.name {
            case "k":
                if let keychain = option.value, !session.names(keychain: keychain) {
                    ToolOutput.report("SecKeychainItemExport", status: .noSuchKeychain)
                    return 1
                }
            case "t":
                guard let value = option.value, ["certs", "allKeys", "pubKeys", "privKeys", "identities", "all"].contains(value) else {
                    return ToolCommand.showUsage
                }
                type = value
            case "f":
                let formats = ["openssl", "openssh1", "openssh2", "bsafe", "pkcs7", "pkcs8", "pkcs12", "netscape", "x509", "pemseq"]
                guard let value = option.value, formats.contains(value) else { return ToolCommand.showUsage }
                format = value
            case "p": pem = true
            case "P": passphrase = SecretBytes(Array((option.value ?? "").utf8))
            case "o": output = option.value
            default: break
            }
        }
        let bytes: [UInt8]
        do throws(KeychainError) {
            let items = try gather(type, session)
            let count = items.certificates.count + items.keys.count
            guard count > 0 else { throw KeychainError(status: .param) }
            switch format ?? (count > 1 ? "pemseq" : items.certificates.isEmpty ? "openssl" : "x509") {
            case "pkcs12":
                guard items.keys.count <= 1 else { throw KeychainError(status: .unimplemented, message: "one private key per PKCS#12 file") }
                let password = passphrase ?? PasswordPrompt.read("Enter the passphrase for the exported file: ") ?? SecretBytes([])
                let key = try items.keys.first.map { key throws(KeychainError) in
                    guard let pkcs8 = key.pkcs8Representation else { throw KeychainError(status: .param) }
                    return SecretBytes(pkcs8)
                }
                // The key's certificate first, as PKCS12_create wants it.
                let label = items.keys.first?.applicationLabel
                let ordered = items.certificates.filter { $0.publicKeyHash == label } + items.certificates.filter { $0.publicKeyHash != label }
                let file = try session.call(
                    Service.EncodePKCS12(privateKey: key, certificates: ordered.map { Data($0.der) }, passphrase: password, name: nil))
                bytes = Array(file.bytes)
            case "x509" where items.keys.isEmpty && items.certificates.count == 1:
                bytes = pem ? Array(CertificateCommands.pem(items.certificates[0].der).utf8) : items.certificates[0].der
            case "pemseq" where items.keys.isEmpty:
                bytes = Array(items.certificates.map { CertificateCommands.pem($0.der) }.joined().utf8)
            default:
                throw KeychainError(status: .unimplemented, message: "this format for these items")
            }
        } catch {
            ToolOutput.report("SecKeychainItemExport", error)
            return 1
        }
        guard let output else {
            ToolOutput.print(bytes: bytes)
            return 0
        }
        guard FileManager.default.createFile(atPath: output, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            ToolOutput.report("Error writing to \(output): Permission denied")
            return 1
        }
        if !session.quiet { ToolOutput.error("...\(bytes.count) bytes written to \(output)\n") }
        return 0
    }

    /// The items `-t` names: certificates, private and public keys, or identities (each
    /// private key with its certificate).
    private static func gather(_ type: String, _ session: ToolSession) throws(KeychainError) -> (certificates: [CertificateFields], keys: [AsymmetricKey]) {
        let certificates = type == "certs" || type == "all" || type == "identities" ? try CertificateCommands.all(SecName.kSecClassCertificate, session).map(\.fields) : []
        var keys: [AsymmetricKey] = []
        for (keyClass, wanted) in [(AsymmetricKey.KeyClass.private, ["allKeys", "privKeys", "identities", "all"]), (.public, ["allKeys", "pubKeys"])]
        where wanted.contains(type) {
            keys += try storedKeys(keyClass, session)
        }
        guard type == "identities" else { return (certificates, keys) }
        let identities = keys.filter { key in certificates.contains { $0.publicKeyHash == key.applicationLabel } }
        return (certificates.filter { certificate in identities.contains { $0.applicationLabel == certificate.publicKeyHash } }, identities)
    }

    private static func storedKeys(_ keyClass: AsymmetricKey.KeyClass, _ session: ToolSession) throws(KeychainError) -> [AsymmetricKey] {
        let query: [String: KeychainValue] = [
            QueryKey.itemClass: .string(SecName.kSecClassKey), SecName.kSecAttrKeyClass: .string(keyClass.attributeValue),
            QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll), QueryKey.returnAttributes: .bool(true), QueryKey.returnData: .bool(true),
        ]
        let found: KeychainValue?
        do {
            found = try session.call(Service.CopyMatching(query))
        } catch where error == .itemNotFound {
            return []
        }
        var keys: [AsymmetricKey] = []
        for item in CertificateCommands.items(found) {
            // The store keeps the key type as a number, as Apple's does ("73"/73 alike).
            let typeName = item[SecName.kSecAttrKeyType].flatMap { $0.stringValue ?? $0.numberValue.map { String($0) } }
            guard let data = item[QueryKey.valueData]?.dataValue, let type = typeName.flatMap(AsymmetricKey.KeyType.init(attributeValue:)) else { continue }
            if item[SecName.kSecAttrIsExtractable]?.boolValue == false { throw KeychainError(status: .dataNotAvailable) }
            if let key = try? AsymmetricKey(externalRepresentation: data, type: type, keyClass: keyClass) { keys.append(key) }
        }
        return keys
    }
}
