import CodeSigning
import Crypto
import FoundationEssentials
import KeychainModel
import KeychainSystem
import KeychainStore
import KeychainCallers

#if canImport(Glibc)
import Glibc
#endif

/// The user's local developer root: its private key is an item of the keychain itself
/// (class `keys`, WhenUnlockedThisDeviceOnly, in a group no caller can be entitled to),
/// so it is as safe as the user's secrets and never leaves the daemon; its certificate
/// is the trust anchor `developer-roots/local-root.pem` in the keychain's home.
struct LocalDeveloperRoot: Sendable {
    let store: KeychainStore
    let home: String

    /// Trousseau's own namespace: not a Team ID ("trousseau" has nine characters), not
    /// "unsigned.", not "group.", so no signature or implicit group can name it.
    static let accessGroup = AccessGroups.DaemonGroup.developerRoot.rawValue
    private static let label = "Trousseau local developer root"

    /// Issues a developer certificate, creating the root on first use.
    func issue(team: TeamIdentifier, applicationGroups: [String], publicKey: P256.Signing.PublicKey) throws -> (DeveloperCertificate, DeveloperRoot) {
        let key = try loadOrCreateKey()
        let root = try trustedCertificate(for: key)
        return (try DeveloperCertificate.issue(team: team, applicationGroups: applicationGroups, publicKey: publicKey, root: root, rootKey: key), root)
    }

    private var keyQuery: [String: KeychainValue] {
        [
            "class": .string(ItemClass.key.rawValue), "kcls": .number(1), "atag": .data(Data(Self.accessGroup.utf8)),
            "agrp": .string(Self.accessGroup),
        ]
    }

    private var groups: AccessGroups { .daemon(.developerRoot) }

    private func loadOrCreateKey() throws -> P256.Signing.PrivateKey {
        if let key = try loadKey() { return key }
        let key = P256.Signing.PrivateKey()
        var item = keyQuery
        item["labl"] = .string(Self.label)
        item["pdmn"] = .string(ProtectionClass.whenUnlockedThisDeviceOnly.rawValue)
        item["v_Data"] = .data(key.rawRepresentation)
        do {
            _ = try store.add(item, caller: groups)
            return key
        } catch let error as KeychainError where error.status == OSStatusCode.duplicateItem {
            // Another request created it first.
            guard let key = try loadKey() else { throw error }
            return key
        }
    }

    private func loadKey() throws -> P256.Signing.PrivateKey? {
        var query = keyQuery
        query["r_Data"] = .bool(true)
        do {
            guard case .data(let raw)? = try store.copyMatching(query, caller: groups) else {
                throw KeychainError.decode("the local developer root key is not data")
            }
            return try P256.Signing.PrivateKey(rawRepresentation: raw)
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            return nil
        }
    }

    /// The root certificate in the trust directory, rewritten when it is missing or is
    /// not for `key` (a user may delete the file to stop trusting the local root; issuing
    /// again trusts it again).
    private func trustedCertificate(for key: P256.Signing.PrivateKey) throws -> DeveloperRoot {
        let directory = DeveloperRoots.userDirectory(home: home)
        let path = directory + "/" + DeveloperRoots.localRootFileName
        if let existing = DeveloperRoots.load(from: [directory]).roots.roots.first(where: {
            P256.Signing.PublicKey($0.certificate.publicKey)?.rawRepresentation == key.publicKey.rawRepresentation
        }), existing.isValid(at: Date()) {
            return existing
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw SystemCall.ioError("cannot create \(directory)")
        }
        let root = try DeveloperRoot.create(key: key, name: "Trousseau Local Developer Root (uid \(getuid()))")
        do {
            try Data(root.pem.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw KeychainError(status: OSStatusCode.io, message: "cannot write \(path): \(error)")
        }
        return root
    }
}
