public import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where Trousseau's programs find each other: side by side in a build directory, or in an
/// installation's layout under one prefix — `bin/security`, `libexec/trousseau/securityd`
/// and `libexec/trousseau/trousseau-enclave` (scripts/install, the Debian package).
public enum InstallationLayout {
    /// The directory of the daemons, relative to a prefix.
    public static let libexec = "libexec/trousseau"

    /// Where a client looks for `securityd`, in order: `$TROUSSEAU_SECURITYD`; beside this
    /// program (a build directory, or an application that ships it); the libexec of the
    /// prefix this program is installed in (`bin/security` → `libexec/trousseau/`); the
    /// libexec beside the `security` on `PATH`; the usual prefixes (`/usr`, `/usr/local`,
    /// `~/.local`).
    public static func daemonCandidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        if let path = environment["TROUSSEAU_SECURITYD"], !path.isEmpty { return [path] }
        var candidates: [String] = []
        if let executable = ProcessExecutable.path() {
            let directory = parent(executable)
            candidates.append(directory + "/securityd")
            candidates.append(parent(directory) + "/" + libexec + "/securityd")
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":").map(String.init) where !directory.isEmpty {
            let tool = directory + "/security"
            guard access(tool, X_OK) == 0, let resolved = realPath(tool) else { continue }
            candidates.append(parent(parent(resolved)) + "/" + libexec + "/securityd")
        }
        var prefixes = ["/usr", "/usr/local"]
        if let home = environment["HOME"], !home.isEmpty { prefixes.append(home + "/.local") }
        candidates += prefixes.map { $0 + "/" + libexec + "/securityd" }
        var seen = Set<String>()
        return candidates.filter { seen.insert($0).inserted }
    }

    /// The first candidate that is an executable file, or nil.
    public static func installedDaemon(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        daemonCandidates(environment: environment).first { isExecutableFile($0) }
    }

    /// The `security` tool securityd gives its role to: beside securityd in a build
    /// directory, else the one of securityd's installation (`../../bin/security`).
    public static func securityTool() -> String { installedProgram("security") }

    /// The Keychain Access window securityd gives its role to, found as the tool is.
    public static func keychainAccess() -> String { installedProgram("keychain-access") }

    private static func installedProgram(_ name: String) -> String {
        let beside = ProcessExecutable.sibling(name)
        if isExecutableFile(beside) { return beside }
        let executable = ProcessExecutable.path() ?? ""
        let installed = parent(parent(parent(executable))) + "/bin/" + name
        return realPath(installed) ?? beside
    }

    /// `NAME (Trousseau) VERSION`: the version scripts/install (or the package) wrote to
    /// `share/trousseau/version` of the prefix this program is installed in; a build that was
    /// not installed says so.
    public static func versionLine(of name: String) -> String {
        let executable = ProcessExecutable.path().flatMap(realPath) ?? ""
        // bin/security, libexec/trousseau/securityd: the prefix is two or three levels up.
        for prefix in [parent(parent(executable)), parent(parent(parent(executable)))] {
            if let text = try? String(contentsOfFile: prefix + "/share/trousseau/version", encoding: .utf8) {
                let version = String(text.split(whereSeparator: \.isNewline).first ?? "").filter { !$0.isWhitespace }
                if !version.isEmpty { return "\(name) (Trousseau) \(version)" }
            }
        }
        return "\(name) (Trousseau) development build, not installed (no share/trousseau/version beside it)"
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    public static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
