import Crypto
import FoundationEssentials
import KeychainCertificates
import KeychainClient
import KeychainModel
import KeychainProtocol
import SwiftASN1

#if canImport(Glibc)
import Glibc
#endif

/// macOS's certificate and identity commands (`keychain_add.c`, `keychain_find.c`,
/// `identity_find.m`, `verify_cert.c`), with their output, messages and statuses.
enum CertificateCommands {
    /// `add-certificates [-k keychain] file...`: each file one certificate, DER or PEM.
    static func addCertificates(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hk:").parse(arguments.dropFirst()), !parsed.operands.isEmpty,
            parsed.options.allSatisfy({ $0.name == "k" && !($0.value ?? "").isEmpty })
        else { return ToolCommand.showUsage }
        let keychain = parsed.options.last?.value
        let target: KeychainName
        do throws(KeychainError) {
            if let keychain { target = session.resolve(keychain) } else { target = try session.defaultKeychain() }
        } catch {
            ToolOutput.report("SecKeychainCopyDefault", error)
            return 1
        }
        if target.isReadOnly {
            ToolOutput.report("SecCertificateAddToKeychain", status: .readOnly)
            return 1
        }
        var result: Int32 = 0
        for file in parsed.operands {
            guard let certificate = read(file) else {
                result = 1
                continue
            }
            do throws(KeychainError) {
                _ = try session.scoped(to: target) { () throws(KeychainError) in try session.call(Service.Add(certificate.itemAttributes)) }
            } catch where error == .duplicateItem {
                ToolOutput.report("\(file): already in \(keychain ?? "default keychain")")
                result = 1
            } catch {
                ToolOutput.report("SecCertificateAddToKeychain", error)
                result = 1
            }
        }
        return result
    }

    /// `find-certificate [-a] [-c name] [-e emailAddress] [-m] [-p] [-Z] [keychain...]`.
    static func findCertificate(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hac:e:mpZ").parse(arguments.dropFirst()), !parsed.options.contains(where: { $0.name == "h" }) else {
            return ToolCommand.showUsage
        }
        var all = false, emails = false, pem = false, hashes = false
        var name: String?, email: String?
        for option in parsed.options {
            switch option.name {
            case "a": all = true
            case "c": name = option.value
            case "e": email = option.value
            case "m": emails = true
            case "p": pem = true
            default: hashes = true
            }
        }
        // The keychains named, else the search list; System Roots only when named.
        let certificates: [(fields: CertificateFields, attributes: [String: KeychainValue], keychain: String)]
        do throws(KeychainError) {
            certificates = try certificateItems(SecName.kSecClassCertificate, in: parsed.operands, session)
        } catch {
            ToolOutput.report("SecKeychainSearchCopyNext", error)
            return error.status.rawValue
        }
        let matching = certificates.filter { certificate in
            if let email { return certificate.fields.emailAddresses.contains(email) }
            guard let name else { return true }
            return certificate.fields.commonNames.last.map { $0.lowercased().contains(name.lowercased()) } ?? false
        }
        guard !matching.isEmpty || all else {
            ToolOutput.report(email == nil ? "SecKeychainSearchCopyNext" : "SecCertificateFindByEmail", status: .itemNotFound)
            return OSStatusCode.itemNotFound.rawValue
        }
        for certificate in all ? matching : Array(matching.prefix(1)) {
            var out = ""
            if hashes {
                out += "SHA-256 hash: \(Hexadecimal.string(SHA256.hash(data: certificate.fields.der), uppercase: true))\n"
                out += "SHA-1 hash: \(Hexadecimal.string(Insecure.SHA1.hash(data: certificate.fields.der), uppercase: true))\n"
            }
            if emails { out += "email addresses: \(certificate.fields.emailAddresses.joined(separator: ", "))\n" }
            out += pem ? Self.pem(certificate.fields.der) : ItemPrinter.certificateBlock(certificate.attributes, certificate.fields, keychainPath: certificate.keychain)
            ToolOutput.print(out)
        }
        return 0
    }

    /// `delete-certificate [-c name] [-Z hash] [-t] [keychain...]`: the one certificate the
    /// common name or SHA-1 hash names (`-t` would also drop its trust settings: there are
    /// none yet).
    static func deleteCertificate(_ arguments: [String], _ session: ToolSession) -> Int32 {
        delete(arguments, identity: false, session)
    }

    /// `delete-identity [-c name] [-Z hash] [-t] [keychain...]`: the certificate found as
    /// `delete-certificate` finds it, and its private key (none is fine, as on macOS).
    static func deleteIdentity(_ arguments: [String], _ session: ToolSession) -> Int32 {
        delete(arguments, identity: true, session)
    }

    /// `keychain_delete.c`'s `do_delete_certificate`: the trust settings first (`-t`; the
    /// administrator's too when root), then the private key, then the certificate.
    private static func delete(_ arguments: [String], identity: Bool, _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hc:Z:t").parse(arguments.dropFirst()),
            !parsed.options.contains(where: { $0.name == "h" })
        else { return ToolCommand.showUsage }
        let name = parsed.options.last { $0.name == "c" }?.value
        let hash = parsed.options.last { $0.name == "Z" }?.value?.uppercased()
        guard (name == nil) != (hash == nil) else { return ToolCommand.showUsage }
        if parsed.operands.contains(where: session.namesSystemRoots) {
            ToolOutput.report("SecKeychainItemDelete", status: .readOnly)
            return OSStatusCode.readOnly.rawValue
        }
        guard let found = try? certificateItems(SecName.kSecClassCertificate, in: parsed.operands, session),
            let only = unique(found.map { ($0.fields, $0.attributes) }, name: name, hash: hash),
            let home = found.first(where: { $0.fields.der == only.der }).map({ KeychainName.listed($0.keychain, session.paths) })
        else {
            // macOS's words, without its prefix or a newline.
            ToolOutput.error("Unable to delete certificate matching \"\(name ?? hash ?? "")\"")
            return 1
        }
        if parsed.options.contains(where: { $0.name == "t" }) {
            for (domain, label) in [(TrustSettingsDomain.user, "user"), (.admin, "admin")] where domain == .user || getuid() == 0 {
                do throws(KeychainError) {
                    try session.call(Service.RemoveTrustSettings(domain: domain, certificate: Data(only.der)), purpose: "change trust settings")
                } catch where error == .itemNotFound {
                    // No trust settings: not an error.
                } catch {
                    ToolOutput.report("SecTrustSettingsRemoveTrustSettings (\(label))", error)
                    return error.status.rawValue
                }
            }
        }
        do throws(KeychainError) {
            try session.scoped(to: home) { () throws(KeychainError) in
            if identity {
                do throws(KeychainError) {
                    try session.call(
                        Service.Delete([
                            QueryKey.itemClass: .string(SecName.kSecClassKey), SecName.kSecAttrApplicationLabel: .data(Data(only.publicKeyHash)),
                            SecName.kSecAttrKeyClass: .string(SecName.kSecAttrKeyClassPrivate),
                        ]))
                } catch where error == .itemNotFound {
                    // No private key: deleting the certificate is all there is.
                }
            }
            try session.call(
                Service.Delete([
                    QueryKey.itemClass: .string(SecName.kSecClassCertificate), SecName.kSecAttrIssuer: .data(Data(only.issuer.normalizedContent)),
                    SecName.kSecAttrSerialNumber: .data(Data(only.serialNumber)),
                ]))
            }
            return 0
        } catch {
            ToolOutput.report("SecKeychainItemDelete", error)
            return error.status.rawValue
        }
    }

    /// The one certificate `find_unique_certificate` settles on: by SHA-1 or SHA-256 hash,
    /// or by a case-insensitive piece of its common name, a whole-name match beating the
    /// others; nil when none or several equally good match.
    private static func unique(
        _ certificates: [(fields: CertificateFields, attributes: [String: KeychainValue])], name: String?, hash: String?
    ) -> CertificateFields? {
        if let hash {
            return certificates.first { certificate in
                let der = certificate.fields.der
                return [Hexadecimal.string(Insecure.SHA1.hash(data: der), uppercase: true), Hexadecimal.string(SHA256.hash(data: der), uppercase: true)]
                    .contains(hash)
            }?.fields
        }
        guard let name else { return nil }
        var exact: [CertificateFields] = [], partial: [CertificateFields] = []
        for certificate in certificates {
            guard let common = certificate.fields.commonNames.last?.lowercased(), common.contains(name.lowercased()) else { continue }
            if common == name.lowercased() { exact.append(certificate.fields) } else { partial.append(certificate.fields) }
        }
        let best = exact.isEmpty ? partial : exact
        return best.count == 1 ? best[0] : nil
    }

    /// `find-identity [-p policy]... [-s string] [-v] [keychain...]`: each identity with the
    /// SHA-1 of its certificate and its label, all of them and then the valid ones (those
    /// whose chain is trusted for the policy), in macOS's layout.
    static func findIdentity(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hp:s:v").parse(arguments.dropFirst()), !parsed.options.contains(where: { $0.name == "h" }) else {
            return ToolCommand.showUsage
        }
        // The policies in macOS's order (its bit order), each with its heading.
        let known: [(flag: String, name: String, policy: Service.TrustPolicy?)] = [
            ("ssl-client", "SSL (client)", .ssl(server: false, hostname: nil)), ("ssl-server", "SSL (server)", .ssl(server: true, hostname: nil)),
            ("smime", "S/MIME", nil), ("eap", "EAP", nil), ("ipsec", "IPsec", nil), ("ichat", "iChat", nil),
            ("codesigning", "Code Signing", .codeSigning), ("basic", "X.509 Basic", .basicX509),
        ]
        var wanted = Set<String>()
        for option in parsed.options where option.name == "p" {
            guard let flag = option.value, known.contains(where: { $0.flag == flag }) else { return ToolCommand.showUsage }
            wanted.insert(flag)
        }
        if wanted.isEmpty { wanted = ["basic"] }
        let validOnly = parsed.options.contains { $0.name == "v" }
        let string = parsed.options.last { $0.name == "s" }?.value
        let identities: [(fields: CertificateFields, label: String)]
        do throws(KeychainError) {
            identities = try certificateItems(SecName.kSecClassIdentity, in: parsed.operands, session).map { ($0.fields, $0.fields.subjectSummary ?? "<unknown>") }
        } catch {
            ToolOutput.report("SecIdentitySearchCopyNext", error)
            return error.status.rawValue
        }
        var out = string.map { "Looking for identities matching \"\($0)\"\n" } ?? ""
        for entry in known where wanted.contains(entry.flag) {
            var policy = entry.policy ?? .basicX509
            if case .ssl(let server, _) = policy { policy = .ssl(server: server, hostname: server ? string : nil) }
            let results = identities.map { identity in (identity, evaluate(identity.fields, policy, session)) }
            if !validOnly {
                out += "\nPolicy: \(entry.name)\n  Matching identities\n"
                for (index, (identity, failure)) in results.enumerated() { out += line(index + 1, identity, failure) }
                out += "     \(results.count) identities found\n\n  Valid identities only\n"
            }
            let valid = results.filter { $0.1 == nil }
            for (index, (identity, _)) in valid.enumerated() { out += line(index + 1, identity, nil) }
            out += "     \(valid.count) valid identities found\n"
        }
        ToolOutput.print(out)
        return 0
    }

    /// `verify-cert [-c certFile]... [-r rootCertFile]... [-p policy] [-n name] [-L] [-l] [-q]`:
    /// evaluates the chain (leaf first) in securityd against the roots given, or the system's.
    static func verifyCert(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("hc:r:p:n:d:k:LlqvCNPRt").parse(arguments.dropFirst()),
            !parsed.options.contains(where: { $0.name == "h" }), parsed.operands.isEmpty
        else { return ToolCommand.showUsage }
        var certificates: [Data] = [], roots: [Data] = []
        var policyName = "basic"
        var name: String?
        var date = Date()
        let quiet = parsed.options.contains { $0.name == "q" }
        let client = parsed.options.contains { $0.name == "C" }
        for option in parsed.options {
            switch option.name {
            case "c", "r":
                guard let file = option.value, let certificate = read(file) else { return 1 }
                if option.name == "c" { certificates.append(Data(certificate.der)) } else { roots.append(Data(certificate.der)) }
            case "p": policyName = option.value ?? ""
            case "n": name = option.value
            case "d":
                guard let given = option.value.flatMap(gmtDate) else {
                    ToolOutput.error("Date processing error\n")
                    return ToolCommand.showUsage
                }
                date = given
            default: break
            }
        }
        let policy: Service.TrustPolicy
        switch policyName {
        case "basic": policy = .basicX509
        case "ssl": policy = .ssl(server: !client, hostname: name)
        case "codeSign": policy = .codeSigning
        default: return ToolCommand.showUsage
        }
        guard !certificates.isEmpty else { return ToolCommand.showUsage }
        do throws(KeychainError) {
            let evaluation = try session.call(
                Service.EvaluateTrust(certificates: certificates, policies: [policy], anchors: roots, trustsSystemRoots: roots.isEmpty, verifyDate: date))
            guard evaluation.status == .success else {
                if !quiet { ToolOutput.print("Cert Verify Result: \(cssmName(evaluation.status))\n") }
                return 1
            }
            if !quiet { ToolOutput.print("...certificate verification successful.\n") }
            return 0
        } catch {
            ToolOutput.report("SecTrustEvaluate", error)
            return 1
        }
    }

    // MARK: - Pieces

    /// `verify-cert -d`: `YYYY-MM-DD-hh:mm:ss` or `YYYY-MM-DD`, in GMT, as macOS's tool
    /// reads it with strptime; nil for anything else.
    static func gmtDate(_ text: String) -> Date? {
        let fields = text.split(separator: "-", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 3 || fields.count == 4 else { return nil }
        let time = fields.count == 4 ? fields[3].split(separator: ":", omittingEmptySubsequences: false) : ["0", "0", "0"]
        let numbers = (fields.prefix(3) + time).map { Int($0) }
        guard time.count == 3, numbers.allSatisfy({ $0 != nil }) else { return nil }
        let (year, month, day) = (numbers[0]!, numbers[1]!, numbers[2]!)
        let (hour, minute, second) = (numbers[3]!, numbers[4]!, numbers[5]!)
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else {
            return nil
        }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// A certificate file, DER or PEM; nil (with macOS's message) when it is neither.
    private static func read(_ file: String) -> CertificateFields? {
        guard let contents = FileManager.default.contents(atPath: file) else {
            ToolOutput.report("\(file): No such file or directory")
            return nil
        }
        let der: [UInt8]
        if let text = String(data: contents, encoding: .utf8), let begin = text.firstRange(of: "-----BEGIN"),
            let document = try? PEMDocument(pemString: String(text[begin.lowerBound...]))
        {
            der = document.derBytes
        } else {
            der = Array(contents)
        }
        guard let certificate = try? CertificateFields(der: der) else {
            ToolOutput.report("\(file): \(KeychainError.appleMessage(for: .decode))")
            return nil
        }
        return certificate
    }

    /// System Roots: the certificates of the operating system's CA bundle, as securityd reads
    /// it (the system trust-settings domain).
    private static func systemRoots(_ session: ToolSession) throws(KeychainError) -> [CertificateFields] {
        try session.call(Service.CopyTrustSettings(domain: .system)).records.compactMap { try? CertificateFields(der: Array($0.certificate)) }
    }

    /// Every item of a certificate-bearing class in the keychains named by `operands` (the
    /// search list when none), with the path of its keychain. System Roots answers for
    /// certificates when named. A keychain of the search list that is gone is passed over.
    static func certificateItems(_ itemClass: String, in operands: [String], _ session: ToolSession) throws(KeychainError)
        -> [(fields: CertificateFields, attributes: [String: KeychainValue], keychain: String)]
    {
        var found: [(fields: CertificateFields, attributes: [String: KeychainValue], keychain: String)] = []
        for keychain in try session.keychains(operands) {
            switch keychain {
            case .systemRoots:
                if itemClass == SecName.kSecClassCertificate {
                    found += try systemRoots(session).map { ($0, $0.itemAttributes, KeychainName.systemRootsPath) }
                }
            case .login, .file, .system:
                do {
                    let items = try session.scoped(to: keychain) { () throws(KeychainError) in try all(itemClass, session) }
                    found += items.map { ($0.fields, $0.attributes, keychain.path(session.paths)) }
                } catch where operands.isEmpty && keychain.isPassedOver(error) {
                    continue
                }
            }
        }
        return found
    }

    /// Every item of a certificate-bearing class (certificates, identities) with its
    /// certificate read; none is not an error.
    static func all(_ itemClass: String, _ session: ToolSession) throws(KeychainError) -> [(fields: CertificateFields, attributes: [String: KeychainValue])] {
        let query: [String: KeychainValue] = [
            QueryKey.itemClass: .string(itemClass), QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll),
            QueryKey.returnAttributes: .bool(true), QueryKey.returnData: .bool(true),
        ]
        let found: KeychainValue?
        do {
            found = try session.call(Service.CopyMatching(query))
        } catch where error == .itemNotFound {
            return []
        }
        return items(found).compactMap { item in
            guard let der = item[QueryKey.valueData]?.dataValue, let fields = try? CertificateFields(der: Array(der)) else { return nil }
            return (fields, item)
        }
    }

    /// The item dictionaries of a `kSecMatchLimitAll` result.
    static func items(_ value: KeychainValue?) -> [[String: KeychainValue]] {
        guard case .array(let values)? = value else { return [] }
        return values.compactMap { value in
            if case .dictionary(let item) = value { return item }
            return nil
        }
    }

    /// Why the identity's certificate alone is not valid for `policy`; nil when it is.
    private static func evaluate(_ certificate: CertificateFields, _ policy: Service.TrustPolicy, _ session: ToolSession) -> OSStatusCode? {
        let request = Service.EvaluateTrust(certificates: [Data(certificate.der)], policies: [policy], anchors: [], trustsSystemRoots: true, verifyDate: Date())
        guard let evaluation = try? session.call(request) else { return .internalComponent }
        return evaluation.status == .success ? nil : evaluation.status
    }

    /// `  1) <SHA-1> "label"` and, for an identity that is not valid, its CSSM error.
    private static func line(_ ordinal: Int, _ identity: (fields: CertificateFields, label: String), _ failure: OSStatusCode?) -> String {
        let number = String(ordinal)
        let hash = Hexadecimal.string(Insecure.SHA1.hash(data: identity.fields.der), uppercase: true)
        return String(repeating: " ", count: max(0, 3 - number.count)) + number + ") " + hash + " \"\(identity.label)\""
            + (failure.map { " (\(cssmName($0)))" } ?? "") + "\n"
    }

    /// The CSSM name macOS's tool prints for a trust failure (SecPolicyChecks.list's CSSM
    /// column for each check).
    static func cssmName(_ status: OSStatusCode) -> String {
        switch status {
        case .certificateExpired: "CSSMERR_TP_CERT_EXPIRED"
        case .hostNameMismatch: "CSSMERR_APPLETP_HOSTNAME_MISMATCH"
        case .invalidExtendedKeyUsage: "CSSMERR_APPLETP_INVALID_EXTENDED_KEY_USAGE"
        case .unsupportedKeySize: "CSSMERR_CSP_UNSUPPORTED_KEY_SIZE"
        case .trustSettingDeny: "CSSMERR_APPLETP_TRUST_SETTING_DENY"
        default: "CSSMERR_TP_NOT_TRUSTED"  // not trusted, and a missing intermediate
        }
    }

    /// DER as PEM (`print_buffer_pem`): 64 characters of base64 a line.
    static func pem(_ der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var out = "-----BEGIN CERTIFICATE-----\n"
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            out += base64[index..<end] + "\n"
            index = end
        }
        return out + "-----END CERTIFICATE-----\n"
    }
}
