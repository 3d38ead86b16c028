import FoundationEssentials
import KeychainCertificates
import KeychainModel
import KeychainProtocol
import SwiftASN1

/// macOS's trust settings commands (`trusted_cert_add.c`, `trusted_cert_dump.c`,
/// `trusted_cert_utils.c`), with their output and messages. Errors are printed as
/// `cssmPerror` prints them: `<function>: <message>`, without the tool's prefix.
enum TrustSettingsCommands {
    /// `add-trusted-cert [-d] [-r resultType] [-p policy] [-a appPath] [-s policyString]
    /// [-e allowedError] [-u keyUsage] [-k keychain] [-i settingsFileIn] [-o settingsFileOut]
    /// [certFile]`. Without -r, -p, -a, -s, -e or -u the certificate is trusted as a root for
    /// everything (an empty array of settings, as Apple stores it).
    static func add(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard arguments.count >= 2, let parsed = try? OptionParser("dr:a:p:s:e:u:k:i:o:h").parse(arguments.dropFirst()) else {
            return ToolCommand.showUsage
        }
        var domain = TrustSettingsDomain.user
        var result = TrustSettingsResult.trustRoot
        var policies: [String] = []
        var strings: [String] = []
        var allowedErrors: [Int32] = []
        var keyUsage: Int32 = 0
        var application: String?
        var keychain: String?
        var settingsFiles = false
        var haveConstraints = false
        for option in parsed.options {
            let value = option.value ?? ""
            switch option.name {
            case "d": domain = .admin
            case "r":
                let results: [String: TrustSettingsResult] = ["trustRoot": .trustRoot, "trustAsRoot": .trustAsRoot, "deny": .deny, "unspecified": .unspecified]
                guard let named = results[value] else { return ToolCommand.showUsage }
                result = named
                haveConstraints = true
            case "p":
                guard TrustUsageConstraint.policyNames[value] != nil else { return ToolCommand.showUsage }
                policies.append(value)
                haveConstraints = true
            case "a":
                application = value
                haveConstraints = true
            case "s":
                strings.append(value)
                haveConstraints = true
            case "e":
                let error: Int32 =
                    switch value {
                    case "certExpired": -2_147_409_654  // CSSMERR_TP_CERT_EXPIRED
                    case "hostnameMismatch": -2_147_408_896  // CSSMERR_APPLETP_HOSTNAME_MISMATCH
                    default: Int32(value.prefix { $0.isNumber || $0 == "-" }) ?? 0  // atoi
                    }
                guard error != 0 else {
                    ToolOutput.error("Invalid value for allowed error.\n")
                    return ToolCommand.showUsage
                }
                allowedErrors.append(error)
                haveConstraints = true
            case "u":
                keyUsage = Int32(value.prefix { $0.isNumber || $0 == "-" }) ?? 0
                haveConstraints = true
            case "k": keychain = value
            case "i", "o": settingsFiles = true
            default: return ToolCommand.showUsage
            }
        }
        guard parsed.operands.count <= 1 else { return ToolCommand.showUsage }
        guard let file = parsed.operands.first else {
            ToolOutput.error("No cert file specified.\n")
            return ToolCommand.showUsage
        }
        if settingsFiles {
            // Apple's settings files are property lists of its own; not written here.
            ToolOutput.error("SecTrustSettingsSetTrustSettings: \(KeychainError.appleMessage(for: .unimplemented))\n")
            return 1
        }
        guard let certificate = readCertificate(file) else { return 1 }
        if let keychain {
            // The login keychain, a file keychain or the System keychain (mkcert's
            // `sudo security add-trusted-cert -d -k /Library/Keychains/System.keychain`).
            let target = session.resolve(keychain)
            if target.isReadOnly {
                ToolOutput.error("SecCertificateAddToKeychain: \(KeychainError.appleMessage(for: .readOnly))\n")
                return 1
            }
            do throws(KeychainError) {
                _ = try session.scoped(to: target) { () throws(KeychainError) in try session.call(Service.Add(certificate.itemAttributes)) }
            } catch where error == .duplicateItem {
                // That's fine.
            } catch {
                ToolOutput.error("SecCertificateAddToKeychain: \(KeychainError.appleMessage(for: error.status))\n")
                return 1
            }
        }
        var constraints: [TrustUsageConstraint] = []
        if haveConstraints {
            let stored = result == .trustRoot ? nil : result
            for policy in policies.isEmpty ? [nil] : policies.map(Optional.some) {
                for string in policy == nil || strings.isEmpty ? [nil] : strings.map(Optional.some) {
                    for error in allowedErrors.isEmpty ? [nil] : (policy == nil ? [allowedErrors.last] : allowedErrors.map(Optional.some)) {
                        constraints.append(
                            TrustUsageConstraint(
                                policy: policy, policyString: string, allowedError: error, keyUsage: keyUsage == 0 ? nil : keyUsage,
                                application: application, result: stored))
                    }
                }
            }
        }
        let record = TrustSettingsRecord(certificate: Data(certificate.der), constraints: constraints)
        do throws(KeychainError) {
            try session.call(Service.SetTrustSettings(domain: domain, record: record), purpose: "change trust settings")
        } catch {
            ToolOutput.error("SecTrustSettingsSetTrustSettings: \(KeychainError.appleMessage(for: error.status))\n")
            return 1
        }
        return 0
    }

    /// `remove-trusted-cert [-d] certFile`.
    static func remove(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("dh").parse(arguments.dropFirst()), !parsed.options.contains(where: { $0.name == "h" }),
            parsed.operands.count <= 1
        else { return ToolCommand.showUsage }
        guard let file = parsed.operands.first else {
            ToolOutput.error("No cert file specified.\n")
            return ToolCommand.showUsage
        }
        guard let certificate = readCertificate(file) else { return 1 }
        let domain: TrustSettingsDomain = parsed.options.isEmpty ? .user : .admin
        do throws(KeychainError) {
            try session.call(Service.RemoveTrustSettings(domain: domain, certificate: Data(certificate.der)), purpose: "change trust settings")
        } catch {
            ToolOutput.error("SecTrustSettingsRemoveTrustSettings: \(KeychainError.appleMessage(for: error.status))\n")
            return 1
        }
        return 0
    }

    /// `dump-trust-settings [-s] [-d]`: each certificate of the domain by its subject
    /// summary, with its settings; the system's are the CA bundle's roots, each with none.
    static func dump(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard let parsed = try? OptionParser("sdh").parse(arguments.dropFirst()), !parsed.options.contains(where: { $0.name == "h" }),
            parsed.operands.isEmpty
        else { return ToolCommand.showUsage }
        var domain = TrustSettingsDomain.user
        for option in parsed.options { domain = option.name == "s" ? .system : .admin }
        let records: [TrustSettingsRecord]
        do throws(KeychainError) {
            records = try session.call(Service.CopyTrustSettings(domain: domain)).records
        } catch {
            ToolOutput.error("SecTrustSettingsCopyCertificates: \(KeychainError.appleMessage(for: error.status))\n")
            return 1
        }
        var out = "Number of trusted certs = \(records.count)\n"
        for (index, record) in records.enumerated() {
            let summary = (try? CertificateFields(der: Array(record.certificate)))?.subjectSummary ?? ""
            out += "Cert \(index): \(summary)\n"
            out += "   Number of trust settings : \(record.constraints.count)\n"
            for (number, constraint) in record.constraints.enumerated() {
                out += "   Trust Setting \(number):\n"
                if let policy = constraint.policy { out += "      Policy OID            : \(TrustUsageConstraint.policyNames[policy] ?? policy)\n" }
                if let application = constraint.application { out += "      Application           : \(application)\n" }
                if let string = constraint.policyString { out += "      Policy String         : \(string)\n" }
                if let error = constraint.allowedError { out += "      Allowed Error         : \(errorName(error))\n" }
                if let result = constraint.result { out += "      Result Type           : \(resultName(result))\n" }
                if let usage = constraint.keyUsage { out += "      Key Usage             : \(keyUsageName(usage))\n" }
            }
        }
        ToolOutput.print(out)
        return 0
    }

    /// A certificate file, DER or PEM; on failure the messages of Apple's `readCertFile`.
    private static func readCertificate(_ file: String) -> CertificateFields? {
        guard let contents = FileManager.default.contents(atPath: file) else {
            ToolOutput.print("***Error reading file \(file)\n")
            ToolOutput.error("Error reading file \(file)\n")
            return nil
        }
        var der = Array(contents)
        if let text = String(data: contents, encoding: .utf8), let begin = text.firstRange(of: "-----BEGIN") {
            guard let document = try? PEMDocument(pemString: String(text[begin.lowerBound...])) else {
                ToolOutput.error("Error decoding cert file \(file)\n")
                ToolOutput.error("Error reading file \(file)\n")
                return nil
            }
            der = document.derBytes
        }
        guard let certificate = try? CertificateFields(der: der) else {
            ToolOutput.error("Error reading file \(file)\n")
            return nil
        }
        return certificate
    }

    private static func resultName(_ result: TrustSettingsResult) -> String {
        switch result {
        case .trustRoot: "kSecTrustSettingsResultTrustRoot"
        case .trustAsRoot: "kSecTrustSettingsResultTrustAsRoot"
        case .deny: "kSecTrustSettingsResultDeny"
        case .unspecified: "kSecTrustSettingsResultUnspecified"
        }
    }

    private static func errorName(_ error: Int32) -> String {
        switch error {
        case -2_147_409_654: "CSSMERR_TP_CERT_EXPIRED"
        case -2_147_408_896: "CSSMERR_APPLETP_HOSTNAME_MISMATCH"
        default: "\(error)"
        }
    }

    private static func keyUsageName(_ usage: Int32) -> String {
        let bits = UInt32(bitPattern: usage)
        if bits == 0xFFFF_FFFF { return "<any>" }
        if bits == 0 { return "<none>" }
        let names = [(1, "Signature"), (2, "EnDecryptData"), (4, "EnDecryptKey"), (8, "SignCert"), (0x10, "SignRevocation"), (0x20, "KeyExchange")]
        return "< " + names.filter { bits & UInt32($0.0) != 0 }.map { $0.1 + " " }.joined() + " >"
    }
}
