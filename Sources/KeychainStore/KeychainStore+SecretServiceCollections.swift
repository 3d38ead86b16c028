import FoundationEssentials
import GRDB
public import KeychainCallers
import KeychainModel

/// The Secret Service's collections and aliases, per scope (stored by `owner`, the scope's
/// default access group). A created collection's items are in its own access group, so that deleting it is
/// one statement that can reach no other item.
///
/// Collection names and labels, and alias names, are stored in plaintext (as gnome-keyring's
/// file names and headers are): docs/SECURITY.md.
extension KeychainStore {
    /// The collections `owner` made, and the login collection's row once its label changed,
    /// by name. A created collection's access group holding items but no row (a backup
    /// restored without its collections) is a collection too, labelled with its name.
    public func secretServiceCollections(owner scope: SecretScope) throws -> [SecretServiceCollection] {
        let owner = scope.defaultGroup
        return try read { db in
            let rows = try statements.statement("SELECT name, label, created, modified FROM secret_collection WHERE owner = ? ORDER BY name", in: db)
            var collections = try Row.fetchAll(rows, arguments: [owner]).map { row in
                SecretServiceCollection(
                    owner: owner, name: row["name"], label: row["label"],
                    created: Date(timeIntervalSince1970: row["created"]), modified: Date(timeIntervalSince1970: row["modified"]))
            }
            let prefix = SecretServiceCollection.itemGroup(owner: owner, name: "")
            // A range on the (agrp, …) index rather than LIKE, whose wildcards the owner may contain.
            let groups = try String.fetchAll(
                statements.statement("SELECT DISTINCT agrp FROM genp WHERE agrp > ? AND agrp < ? AND \(StoreSchema.collectionGroupTerm)", in: db),
                arguments: [prefix, prefix + "\u{10FFFF}"])
            let named = Set(collections.map(\.name))
            for group in groups where group.hasPrefix(prefix) {
                let name = String(group.dropFirst(prefix.count))
                guard !named.contains(name), SecretServiceCollection.isValidName(name) else { continue }
                collections.append(
                    SecretServiceCollection(owner: owner, name: name, label: name, created: Date(timeIntervalSince1970: 0), modified: Date(timeIntervalSince1970: 0)))
            }
            return collections
        }
    }

    /// Makes a collection of `owner` labelled `label`, named after it (``SecretServiceCollection/name(forLabel:taken:)``).
    public func createSecretServiceCollection(owner scope: SecretScope, label: String) throws -> SecretServiceCollection {
        let owner = scope.defaultGroup
        let taken = Set(try secretServiceCollections(owner: scope).map(\.name))
        let now = Date()
        let collection = SecretServiceCollection(
            owner: owner, name: SecretServiceCollection.name(forLabel: label, taken: taken), label: label, created: now, modified: now)
        try write { db in
            try execute(db, "INSERT INTO secret_collection (owner, name, label, created, modified) VALUES (?, ?, ?, ?, ?)",
                arguments: [owner, collection.name, label, now.timeIntervalSince1970, now.timeIntervalSince1970])
        }
        return collection
    }

    /// Sets the label of collection `name` of `owner` (a row is made for the login collection
    /// the first time).
    public func setSecretServiceCollectionLabel(owner scope: SecretScope, name: String, label: String, created: Date) throws {
        let owner = scope.defaultGroup
        let now = Date().timeIntervalSince1970
        try write { db in
            try execute(db, """
                    INSERT INTO secret_collection (owner, name, label, created, modified) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (owner, name) DO UPDATE SET label = excluded.label, modified = excluded.modified
                    """,
                arguments: [owner, name, label, created.timeIntervalSince1970, now])
        }
    }

    /// Runs `sql` through the statement cache (a statement is prepared once per connection).
    private func execute(_ db: Database, _ sql: String, arguments: StatementArguments) throws {
        try statements.statement(sql, in: db).execute(arguments: arguments)
    }

    /// SQLite's plans for listing `owner`'s collections' groups and deleting one (the tests
    /// check that both use the collections' index).
    public func secretServiceCollectionPlans(owner scope: SecretScope) throws -> [String] {
        let owner = scope.defaultGroup
        return try read { db in
            let prefix = SecretServiceCollection.itemGroup(owner: owner, name: "")
            let list = "SELECT DISTINCT agrp FROM genp WHERE agrp > ? AND agrp < ? AND \(StoreSchema.collectionGroupTerm)"
            let delete = "DELETE FROM genp WHERE agrp = ? AND \(StoreSchema.collectionGroupTerm)"
            return try [(list, [prefix, prefix + "\u{10FFFF}"]), (delete, [prefix + "x"])].flatMap { sql, arguments in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments)).map { $0["detail"] as String }
            }
        }
    }

    /// Deletes created collection `name` of `owner`: every item of its access group, its row
    /// and the aliases that name it, in one transaction (a crash leaves all or none of it).
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func deleteSecretServiceCollection(owner scope: SecretScope, name: String) throws -> Int {
        let owner = scope.defaultGroup
        precondition(!SecretServiceCollection.reserved.contains(name), "the login and session collections are not deleted this way")
        return try write { db in
            // The trigger on genp removes the rows' attribute tokens.
            try execute(db, "DELETE FROM genp WHERE agrp = ? AND \(StoreSchema.collectionGroupTerm)",
                arguments: [SecretServiceCollection.itemGroup(owner: owner, name: name)])
            let deleted = db.changesCount
            try execute(db, "DELETE FROM secret_collection WHERE owner = ? AND name = ?", arguments: [owner, name])
            try execute(db, "DELETE FROM secret_alias WHERE owner = ? AND name = ?", arguments: [owner, name])
            return deleted
        }
    }

    /// The aliases `owner` set: alias → collection name.
    public func secretServiceAliases(owner scope: SecretScope) throws -> [String: String] {
        let owner = scope.defaultGroup
        return try read { db in
            var aliases: [String: String] = [:]
            for row in try Row.fetchAll(statements.statement("SELECT alias, name FROM secret_alias WHERE owner = ?", in: db), arguments: [owner]) {
                aliases[row["alias"]] = row["name"]
            }
            return aliases
        }
    }

    /// Points `alias` of `owner` at collection `name`, or removes it when `name` is nil.
    public func setSecretServiceAlias(owner scope: SecretScope, alias: String, name: String?) throws {
        let owner = scope.defaultGroup
        try write { db in
            if let name {
                try execute(db, "INSERT INTO secret_alias (owner, alias, name) VALUES (?, ?, ?) ON CONFLICT (owner, alias) DO UPDATE SET name = excluded.name",
                    arguments: [owner, alias, name])
            } else {
                try execute(db, "DELETE FROM secret_alias WHERE owner = ? AND alias = ?", arguments: [owner, alias])
            }
        }
    }
}
