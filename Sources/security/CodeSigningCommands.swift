import ArgumentParser
import CodeSigning
import Crypto
import FoundationEssentials
import KeychainModel
import X509

#if canImport(Glibc)
import Glibc
#endif

struct CreateDeveloperIdentity: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-developer-identity",
        abstract: "Create a developer identity (signing key and certificate) for a team.",
        discussion: """
            The certificate is issued by this keychain's local developer root, which is created \
            and trusted on first use; once a keychain password is set, issuing needs it.
            """)

    @Option(help: "The Team ID: ten characters of A-Z and 0-9.")
    var team: String

    @Option(help: "The directory to write identity.key, identity.pem and root.pem into.")
    var out: String

    @Option(name: .customLong("app-group"), help: "An application group (group.…) the root registers to the team; repeatable.")
    var appGroups: [String] = []

    func run() throws {
        let key = P256.Signing.PrivateKey()
        do {
            let team = try TeamIdentifier(team)
            let client = try KeychainLocation.connect()
            let result = try client.callWithPresence(
                .issueDeveloperCertificate(team: team.rawValue, applicationGroups: appGroups, publicKey: key.publicKey.rawRepresentation),
                purpose: "use the local developer root")
            guard case .dictionary(let issued)? = result, case .data(let certificate)? = issued["certificate"],
                case .data(let root)? = issued["root"]
            else {
                throw KeychainError.decode("securityd answered without a certificate")
            }
            let identity = try DeveloperIdentity(key: key, certificate: DeveloperCertificate(Certificate(derEncoded: Array(certificate))))
            try identity.write(to: out, root: DeveloperRoot(Certificate(derEncoded: Array(root))))
            print("developer identity for team \(team) in \(out)")
        } catch {
            throw fail("create-developer-identity", error)
        }
    }
}

struct CodeSign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codesign",
        abstract: "Sign an executable with a developer identity and entitlements, or display its signature.",
        discussion: """
            The signature is appended to the executable and binds its code hash to the \
            entitlements (application-identifier, keychain-access-groups, \
            com.apple.security.application-groups, from a property list or JSON file).
            """)

    @Option(help: "A developer identity directory (from create-developer-identity).")
    var identity: String?

    @Option(help: "The entitlements file: a property list or a JSON object.")
    var entitlements: String?

    @Flag(help: "Display the executable's signature and whether this keychain trusts it.")
    var display = false

    @Argument(help: "The executable.")
    var executable: String

    func validate() throws {
        if display, identity != nil || entitlements != nil {
            throw ValidationError("--display takes no --identity or --entitlements")
        }
        if !display, identity == nil {
            throw ValidationError("signing needs --identity")
        }
    }

    func run() throws {
        do {
            if display { try show() } else { try sign() }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail("codesign", error)
        }
    }

    private func sign() throws {
        let identity = try DeveloperIdentity(directory: identity!)  // validate() requires it
        let granted = try entitlements.map { try Entitlements(file: Self.read($0)) } ?? Entitlements()
        if let violation = granted.violation(team: identity.certificate.team, registeredApplicationGroups: identity.certificate.applicationGroups) {
            throw KeychainError(status: OSStatusCode.param, message: "the entitlements claim more than the team owns: \(violation)")
        }
        let file = try Self.read(executable)
        let code = CodeSignature.split(file)?.code ?? file
        let signature = try identity.sign(code: code, entitlements: granted)
        try Self.replace(executable, with: code + signature.appendix)
    }

    private func show() throws {
        let file = try Self.read(executable)
        guard let (_, block) = CodeSignature.split(file) else {
            writeToStandardError("\(executable): code object is not signed at all\n")
            throw ExitCode(1)
        }
        let signature = try CodeSignature(block: block)
        let certificate = try Certificate(derEncoded: Array(signature.certificate))
        let paths = KeychainLocation.paths
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
            "CodeHash=sha256:\(signature.codeHash.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())",
            "Authority=\(Self.commonName(certificate.subject))",
            "Authority=\(Self.commonName(certificate.issuer))",
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
        print(lines.joined(separator: "\n"))
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
            throw KeychainError(status: OSStatusCode.io, message: "cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        let temporary = path + ".codesign-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, info.st_mode & 0o7777)
        guard fd >= 0 else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var written = 0
        contents.withUnsafeBytes { bytes in
            while written < bytes.count {
                let count = write(fd, bytes.baseAddress! + written, bytes.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                written += count
            }
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == contents.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw KeychainError(status: OSStatusCode.io, message: "cannot write \(path): \(reason)")
        }
    }
}
