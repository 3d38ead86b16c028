import FoundationEssentials
public import X509

#if canImport(Glibc)
import Glibc
#endif

/// The developer roots a keychain trusts: every `*.pem` certificate authority in the
/// user's `KEYCHAIN_HOME/developer-roots` and in the system-wide `/etc/trousseau/developer-roots`.
public struct DeveloperRoots: Sendable {
    public let roots: [DeveloperRoot]

    public static let directoryName = "developer-roots"
    public static let systemDirectory = "/etc/trousseau/developer-roots"
    /// The file name of the user's local root in the user's directory.
    public static let localRootFileName = "local-root.pem"

    public init(_ roots: [DeveloperRoot]) {
        self.roots = roots
    }

    /// The user's directory of trusted roots in a keychain home.
    public static func userDirectory(home: String) -> String {
        home + "/" + directoryName
    }

    /// Loads every readable root certificate of `directories`; a file that is not one is
    /// skipped (and named in `skipped`), it does not hide the others.
    public static func load(from directories: [String]) -> (roots: DeveloperRoots, skipped: [String]) {
        var roots: [DeveloperRoot] = []
        var skipped: [String] = []
        for directory in directories {
            for file in pemFiles(in: directory) {
                guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                    let root = try? DeveloperRoot(Certificate(pemEncoded: text))
                else {
                    skipped.append(file)
                    continue
                }
                roots.append(root)
            }
        }
        return (DeveloperRoots(roots), skipped)
    }

    /// A stamp that changes when a file is added to, removed from or replaced in the
    /// directories: their and their files' inode, size and modification time.
    public static func stamp(of directories: [String]) -> [Int64] {
        var stamp: [Int64] = []
        for path in directories + directories.flatMap(pemFiles(in:)) {
            var info = stat()
            guard stat(path, &info) == 0 else {
                stamp.append(-1)
                continue
            }
            stamp += [Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
        }
        return stamp
    }

    /// The trusted root that issued `leaf`, if any.
    public func issuer(of leaf: Certificate) -> DeveloperRoot? {
        roots.first { $0.issued(leaf) }
    }

    private static func pemFiles(in directory: String) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return entries.filter { $0.hasSuffix(".pem") }.sorted().map { directory + "/" + $0 }
    }
}
