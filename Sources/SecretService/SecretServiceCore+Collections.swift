import FoundationEssentials
import KeychainCallers
import KeychainModel
import KeychainStore

/// Collections as one caller sees them: the login collection (its scope's own access groups,
/// as before collections existed), the session collection (memory), and those it made (an
/// access group each). A path naming anything else — another scope's collection among
/// them — is NoSuchObject.
extension SecretServiceCore {
    /// One collection of one scope, resolved.
    struct ScopedCollection {
        let name: String
        /// The scope's default group: whose it is.
        let owner: String
        /// The access groups holding its items (none for the session collection); new items
        /// go to its default group.
        let reach: AccessGroups
        /// The groups of ``reach``.
        var groups: [String] { reach.groups }
        let label: String
        let created: Date
        let modified: Date

        var isLogin: Bool { name == SecretServiceCollection.login }
        var isSession: Bool { name == SecretServiceCollection.session }
        var path: String { SecretObjectPath.collectionPath(name) }
        func itemPath(_ id: String) -> String { SecretObjectPath.itemPath(name, id) }
    }

    /// Every collection of the caller's scope: login, session, then those it made by name.
    /// Resolved once per scope until ``forgetCollections(of:)``: every call on an item resolves
    /// its collection.
    func collections(_ caller: Connection) throws -> [ScopedCollection] {
        if let resolved = resolvedCollections[caller.scope] { return resolved }
        let scope = caller.scope
        let owner = scope.defaultGroup
        let stored = try storedCollections(of: scope)
        let loginRow = stored.first { $0.name == SecretServiceCollection.login }
        var all = [
            ScopedCollection(
                name: SecretServiceCollection.login, owner: owner, reach: scope.accessGroups,
                label: loginRow?.label ?? "Login", created: loginRow?.created ?? started, modified: loginRow?.modified ?? started),
            ScopedCollection(
                name: SecretServiceCollection.session, owner: owner, reach: .nothing,
                label: sessionItems.labels[owner] ?? "Session", created: sessionItems.created, modified: sessionItems.created),
        ]
        for row in stored where !SecretServiceCollection.reserved.contains(row.name) {
            all.append(
                ScopedCollection(
                    name: row.name, owner: owner, reach: scope.collection(named: row.name), label: row.label, created: row.created, modified: row.modified))
        }
        resolvedCollections[scope] = all
        return all
    }

    /// The collection `place` names for the caller.
    ///
    /// - Throws: NoSuchObject naming `path` when there is none.
    func collection(_ place: SecretObjectPath.Place, _ caller: Connection, path: String) throws -> ScopedCollection {
        let name: String?
        switch place {
        case .named(let named): name = named
        case .alias(let alias): name = try aliases(caller)[alias]
        }
        guard let name, let collection = try collections(caller).first(where: { $0.name == name }) else {
            throw BusError.noSuchObject(path)
        }
        return collection
    }

    /// The collection that `path` (a collection, or an item of one) is or is in.
    func collection(containing path: String, _ caller: Connection) throws -> ScopedCollection {
        switch SecretObjectPath(path) {
        case .collection(let place)?, .item(let place, _)?: return try collection(place, caller, path: path)
        default: throw BusError.noSuchObject(path)
        }
    }

    /// The caller's aliases: those it set, `default` (login unless set), `login` and `session`.
    func aliases(_ caller: Connection) throws -> [String: String] {
        let owner = caller.scope.defaultGroup
        if let known = storedAliases[owner] { return known }
        var aliases = ["default": SecretServiceCollection.login]
        aliases.merge(try storeCall { try store.secretServiceAliases(owner: caller.scope) }) { _, stored in stored }
        aliases.merge(Self.fixedAliases) { _, fixed in fixed }
        storedAliases[owner] = aliases
        return aliases
    }

    private func storedCollections(of scope: SecretScope) throws -> [SecretServiceCollection] {
        let owner = scope.defaultGroup
        if let known = storedCollections[owner] { return known }
        let read = try storeCall { try store.secretServiceCollections(owner: scope) }
        storedCollections[owner] = read
        return read
    }

    /// Drops what was read of `owner`'s collections and aliases (after this provider changed them).
    func forgetCollections(of owner: String) {
        storedCollections[owner] = nil
        storedAliases[owner] = nil
        resolvedCollections = resolvedCollections.filter { $0.key.defaultGroup != owner }
    }

    // MARK: - Locking

    func lockKey(_ collection: ScopedCollection) -> String { collection.owner + "\u{0}" + collection.name }

    /// Whether a client locked `collection` (and no unlock prompt has succeeded since).
    func isLockedByRequest(_ collection: ScopedCollection) -> Bool {
        lockedCollections.contains(lockKey(collection))
    }

    /// Whether `collection`'s items are unreadable: the keychain is locked (every collection
    /// is then), or a client locked it.
    func isLocked(_ collection: ScopedCollection, keychainLocked: Bool? = nil) -> Bool {
        isLockedByRequest(collection) || (keychainLocked ?? store.secretServiceIsLocked())
    }

    func requireUnlocked(_ collection: ScopedCollection) throws {
        if store.secretServiceIsLocked() {
            throw BusError.isLocked("The keychain has not been unlocked since the machine started")
        }
        if isLockedByRequest(collection) {
            throw BusError.isLocked("The collection \(collection.name) is locked; Unlock it first")
        }
    }

    // MARK: - Items of one collection

    func items(in collection: ScopedCollection, matching attributes: [String: String]) throws -> [SecretServiceItem] {
        try requireUnlocked(collection)
        if collection.isSession { return sessionItems.items(of: collection.owner, matching: attributes) }
        return try storeCall { try store.secretServiceItems(in: collection.reach, matching: attributes) }
    }

    /// The identifiers of `collection`'s items whose tokens match, readable while locked.
    func itemIDs(in collection: ScopedCollection, matching attributes: [String: String]) throws -> [String] {
        if collection.isSession { return sessionItems.items(of: collection.owner, matching: attributes).map(\.id) }
        return try storeCall { try store.secretServiceItemIDs(in: collection.reach, matching: attributes) }.map(\.id)
    }

    func itemExists(_ id: String, in collection: ScopedCollection) throws -> Bool {
        if collection.isSession { return sessionItems.item(id, of: collection.owner) != nil }
        return try storeCall { try store.secretServiceItemExists(id: id, in: collection.reach) }
    }

    func item(_ id: String, in collection: ScopedCollection) throws -> SecretServiceItem? {
        guard !isLocked(collection) else { return nil }
        if collection.isSession { return sessionItems.item(id, of: collection.owner) }
        return try storeCall { try store.secretServiceItem(id: id, in: collection.reach) }
    }

    /// Item `id`'s secret.
    ///
    /// - Throws: NoSuchObject when it is not in `collection`, IsLocked when the collection is.
    func secret(_ id: String, in collection: ScopedCollection) throws -> (SecretBytes, SecretServiceItem) {
        try requireUnlocked(collection)
        do {
            if collection.isSession { return try storeCall { try sessionItems.secret(id, of: collection.owner) } }
            return try storeCall { try store.secretServiceSecret(id: id, in: collection.reach) }
        } catch let error as BusError where error.name == BusError.noSuchObject("").name {
            throw BusError.noSuchObject(collection.itemPath(id))
        }
    }

    func update(
        _ id: String, in collection: ScopedCollection, label: String? = nil, attributes: [String: String]? = nil,
        secret: SecretBytes? = nil, contentType: String? = nil
    ) throws {
        try requireUnlocked(collection)
        if collection.isSession {
            try storeCall { try sessionItems.update(id, of: collection.owner, label: label, attributes: attributes, secret: secret, contentType: contentType) }
        } else {
            try storeCall {
                try store.updateSecretServiceItem(
                    id: id, in: collection.reach, label: label, attributes: attributes, secret: secret, contentType: contentType)
            }
        }
    }
}
