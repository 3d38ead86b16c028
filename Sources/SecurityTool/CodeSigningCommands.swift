import CodeSigning
import Crypto
import FoundationEssentials
import KeychainModel
import KeychainSystem
import KeychainProtocol
import X509

#if canImport(Glibc)
import Glibc
#endif

/// Linux additions: developer identities and code signatures, which give apps their
/// access groups as Apple's signed entitlements do.
enum CodeSigningCommands {
    static let createDeveloperIdentityUsage = """
        --team teamID --out directory [--app-group group.…]...
            --team       The Team ID: ten characters of A-Z and 0-9.
            --out        The directory to write identity.key, identity.pem and root.pem into.
            --app-group  An application group the root registers to the team (repeatable).
        The certificate is issued by this keychain's local developer root, which is created
        and trusted on first use; once a keychain password is set, issuing needs it.
        """

    static let codesignUsage = """
        --identity directory [--entitlements file] executable
               codesign --display executable
            --identity      A developer identity directory (from create-developer-identity).
            --entitlements  The entitlements: a property list or a JSON object.
            --display       Display the executable's signature and whether this keychain trusts it.
        The signature is appended to the executable and binds its code hash to the
        entitlements (application-identifier, keychain-access-groups,
        com.apple.security.application-groups).
        """

    static func createDeveloperIdentity(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var team: String?
        var out: String?
        var appGroups: [String] = []
        guard let parsed = try? OptionParser("h", longOptions: ["team": true, "out": true, "app-group": true]).parse(arguments.dropFirst()),
            parsed.operands.isEmpty
        else { return ToolCommand.showUsage }
        for option in parsed.options {
            switch option.name {
            case "team": team = option.value
            case "out": out = option.value
            case "app-group": appGroups.append(option.value ?? "")
            default: return ToolCommand.showUsage
            }
        }
        guard let team, let out else { return ToolCommand.showUsage }
        let key = P256.Signing.PrivateKey()
        do {
            let team = try TeamIdentifier(team)
            let issued = try session.call(
                Service.IssueDeveloperCertificate(team: team.rawValue, applicationGroups: appGroups, publicKey: key.publicKey.rawRepresentation),
                purpose: "use the local developer root")
            let identity = try DeveloperIdentity(key: key, certificate: DeveloperCertificate(Certificate(derEncoded: Array(issued.certificate))))
            try identity.write(to: out, root: DeveloperRoot(Certificate(derEncoded: Array(issued.root))))
            ToolOutput.print("developer identity for team \(team) in \(out)\n")
            return 0
        } catch {
            let failure = KeychainError.from(error)
            ToolOutput.report("create-developer-identity", failure)
            return failure.status.rawValue
        }
    }

    static func codesign(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var identity: String?
        var entitlements: String?
        var display = false
        guard let parsed = try? OptionParser("h", longOptions: ["identity": true, "entitlements": true, "display": false])
            .parse(arguments.dropFirst()),
            parsed.operands.count == 1
        else { return ToolCommand.showUsage }
        for option in parsed.options {
            switch option.name {
            case "identity": identity = option.value
            case "entitlements": entitlements = option.value
            case "display": display = true
            default: return ToolCommand.showUsage
            }
        }
        let executable = parsed.operands[0]
        do {
            if display {
                guard identity == nil, entitlements == nil else { return ToolCommand.showUsage }
                return try show(executable, session)
            }
            guard let identity else { return ToolCommand.showUsage }
            try sign(executable, identity: identity, entitlements: entitlements)
            return 0
        } catch {
            let failure = KeychainError.from(error)
            ToolOutput.report("codesign", failure)
            return failure.status.rawValue
        }
    }

    private static func sign(_ executable: String, identity: String, entitlements: String?) throws {
        let identity = try DeveloperIdentity(directory: identity)
        let granted = try entitlements.map { try Entitlements(file: read($0)) } ?? Entitlements()
        if let violation = granted.violation(team: identity.certificate.team, registeredApplicationGroups: identity.certificate.applicationGroups) {
            throw KeychainError(status: OSStatusCode.param, message: "the entitlements claim more than the team owns: \(violation)")
        }
        let file = try read(executable)
        let code = CodeSignature.split(file)?.code ?? file
        let signature = try identity.sign(code: code, entitlements: granted)
        try replace(executable, with: code + signature.appendix)
    }

    private static func show(_ executable: String, _ session: ToolSession) throws -> Int32 {
        let file = try read(executable)
        guard let (_, block) = CodeSignature.split(file) else {
            ToolOutput.error("\(executable): code object is not signed at all\n")
            return 1
        }
        let signature = try CodeSignature(block: block)
        let certificate = try Certificate(derEncoded: Array(signature.certificate))
        let paths = session.paths
        let verifier = CodeSignatureVerifier(
            roots: DeveloperRoots.load(from: [DeveloperRoots.userDirectory(home: paths.home), DeveloperRoots.systemDirectory]).roots)
        let verdict: String
        switch verifier.verify(executable: file) {
        case .signed: verdict = "valid for \(paths.home)"
        case .unsigned(let reason): verdict = "not valid for \(paths.home): \(reason)"
        }
        let team = (try? DeveloperCertificate(certificate)).map { $0.team.rawValue } ?? "not set"
        var lines = [
            "Executable=\(executable)",
            "Identifier=\(signature.entitlements.applicationIdentifier ?? "not set")",
            "CodeHash=sha256:\(Hexadecimal.string(signature.codeHash))",
            "Authority=\(commonName(certificate.subject))",
            "Authority=\(commonName(certificate.issuer))",
            "TeamIdentifier=\(team)",
            "Valid=\(certificate.notValidBefore) to \(certificate.notValidAfter)",
            "Verification=\(verdict)",
            "Entitlements:",
        ]
        if let identifier = signature.entitlements.applicationIdentifier {
            lines.append("    \(Entitlements.applicationIdentifierKey)=\(identifier)")
        }
        lines.append("    \(Entitlements.keychainAccessGroupsKey)=\(signature.entitlements.keychainAccessGroups.joined(separator: ","))")
        lines.append("    \(Entitlements.applicationGroupsKey)=\(signature.entitlements.applicationGroups.joined(separator: ","))")
        ToolOutput.print(lines.joined(separator: "\n") + "\n")
        return 0
    }

    private static func commonName(_ name: DistinguishedName) -> String {
        name.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }.flatMap { String($0.value) } ?? "\(name)"
    }

    private static func read(_ path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw KeychainError(status: OSStatusCode.io, message: "cannot read \(path): \(error)")
        }
    }

    /// Writes the signed executable beside the original, with its mode, and renames it
    /// over: a running copy keeps its inode, and a crash leaves the old file whole.
    private static func replace(_ path: String, with contents: Data) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SystemCall.ioError("cannot stat \(path)")
        }
        let temporary = path + ".codesign-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, info.st_mode & 0o7777)
        guard fd >= 0 else {
            throw SystemCall.ioError("cannot create \(temporary)")
        }
        let written = ToolOutput.write(contents, to: fd)
        let synced = fsync(fd) == 0
        close(fd)
        guard written, synced, rename(temporary, path) == 0 else {
            let reason = SystemCall.describe(errno)
            unlink(temporary)
            throw KeychainError(status: OSStatusCode.io, message: "cannot write \(path): \(reason)")
        }
    }
}
