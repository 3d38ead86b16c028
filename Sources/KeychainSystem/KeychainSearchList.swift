import FoundationEssentials
import KeychainModel

/// The user's keychain search list and default keychain, as macOS keeps them in its
/// preferences: paths, the login keychain's among them. They live in `KEYCHAIN_HOME`
/// (`search-list`, one path a line; `default-keychain`), written only by securityd and
/// read by clients too, as macOS's clients read the preferences file itself (it saves the
/// tool a round trip before each search).
/// Without a file, the list is the login keychain alone and it is the default.
public struct KeychainSearchList: Sendable {
    public let home: String
    /// The login keychain's path, as the list and items name it.
    public let loginPath: String
    private let lock = BlockingMutex(())

    public init(home: String, loginPath: String) {
        self.home = home
        self.loginPath = loginPath
    }

    private var listFile: String { home + "/search-list" }
    private var defaultFile: String { home + "/default-keychain" }

    /// The search list.
    public func list() throws -> [String] {
        guard let data = try PrivateFile.read(listFile) else { return [loginPath] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Replaces the search list (macOS's `-s` replaces, it does not add); duplicates are kept once.
    public func setList(_ paths: [String]) throws {
        try lock.withLock { _ in try writeList(paths) }
    }

    /// Adds `path` at the end of the list (a new keychain joins it), in one step with the
    /// read, so that two keychains created at once both join.
    public func append(_ path: String) throws {
        try lock.withLock { _ in try writeList(try list() + [path]) }
    }

    private func writeList(_ paths: [String]) throws {
        var seen = Set<String>()
        let unique = paths.filter { seen.insert($0).inserted }
        try PrivateFile.replace(listFile, with: Data(unique.map { $0 + "\n" }.joined().utf8))
    }

    /// The default keychain.
    public func defaultKeychain() throws -> String {
        guard let data = try PrivateFile.read(defaultFile) else { return loginPath }
        let path = String(decoding: data, as: UTF8.self).trimmingTrailingNewlines
        return path.isEmpty ? loginPath : path
    }

    public func setDefault(_ path: String) throws {
        try lock.withLock { _ in try writeDefault(path) }
    }

    private func writeDefault(_ path: String) throws {
        try PrivateFile.replace(defaultFile, with: Data((path + "\n").utf8))
    }

    /// Removes a deleted keychain from the list, and makes the login keychain the default
    /// again when it was.
    public func forget(_ path: String) throws {
        try lock.withLock { _ in
            let current = try list()
            if current.contains(path) { try writeList(current.filter { $0 != path }) }
            if try defaultKeychain() == path { try writeDefault(loginPath) }
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = Substring(self)
        while text.last == "\n" { text = text.dropLast() }
        return String(text)
    }
}
