import FoundationEssentials
public import KeychainCallers
import KeychainModel
public import KeychainStore
public import KeyringFiles

/// `security import-keyring`: a gnome-keyring keyring's items become Secret Service items of
/// the host scope — where the programs that stored them in gnome-keyring find them now.
public enum KeyringImport {
    /// What happened to the file's items.
    public struct Outcome: Sendable, Equatable {
        public var imported = 0
        public var updated = 0
        public var unchanged = 0
    }

    /// Imports every item of `keyring`. An item whose attributes an item here has exactly is
    /// the same item: left alone when its secret is the same or the one here is newer,
    /// updated (label and secret) when the file's is newer; any other item is added with its
    /// dates. Importing the same file twice therefore adds nothing the second time.
    public static func run(_ keyring: GnomeKeyringFile, into store: KeychainStore, scope: SecretScope = .host) throws -> Outcome {
        var outcome = Outcome()
        for item in keyring.items {
            let same = try store.secretServiceItems(in: scope.accessGroups, matching: item.attributes).filter { $0.attributes == item.attributes }
            if same.isEmpty {
                _ = try store.createSecretServiceItem(
                    in: scope.accessGroups, label: item.label, attributes: item.attributes, secret: item.secret,
                    contentType: "text/plain", replace: false, dates: (item.created, item.modified))
                outcome.imported += 1
                continue
            }
            let secrets = try same.map { try store.secretServiceSecret(id: $0.id, in: scope.accessGroups).0 }
            if secrets.contains(where: { $0.isEqual(to: item.secret) }) {
                outcome.unchanged += 1
            } else if let newest = same.max(by: { $0.modified < $1.modified }), item.modified > newest.modified {
                try store.updateSecretServiceItem(id: newest.id, in: scope.accessGroups, label: item.label, secret: item.secret)
                outcome.updated += 1
            } else {
                outcome.unchanged += 1
            }
        }
        return outcome
    }
}
