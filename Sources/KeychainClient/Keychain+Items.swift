public import FoundationEssentials
public import KeychainModel

// The item level: items named by kind, secrets as Data, "not found" as nil. Reads and
// deletes look at synchronizable and local items alike (Apple's kSecAttrSynchronizableAny);
// an access group narrows them to that group.

extension Keychain {
    /// Adds `secret` as the item's data.
    ///
    /// - Throws: `KeychainError.duplicateItem` when the item exists (in the same group and
    ///   synchronizability); `KeychainError.missingEntitlement` for a group the process lacks.
    public func add<Item: PasswordItem>(_ secret: Data, for item: Item, attributes: ItemAttributes = ItemAttributes()) throws(KeychainError) {
        try add(Self.query(item).merging(attributes.dictionary) { $1 }.merging([QueryKey.valueData: .data(secret)]) { $1 })
    }

    /// Stores `secret` for the item: adds it, or replaces the data (and the given attributes)
    /// of the item that exists.
    public func set<Item: PasswordItem>(_ secret: Data, for item: Item, attributes: ItemAttributes = ItemAttributes()) throws(KeychainError) {
        do {
            try add(secret, for: item, attributes: attributes)
        } catch .duplicateItem {
            var changes = attributes.dictionary
            changes[QueryKey.valueData] = .data(secret)
            var query = Self.query(item)
            query[ItemSchema.Name.accessGroup] = attributes.accessGroup.map { .string($0) }
            query[ItemSchema.Name.synchronizable] = .bool(attributes.synchronizable ?? false)
            changes[ItemSchema.Name.accessGroup] = nil
            changes[ItemSchema.Name.synchronizable] = nil
            try update(query, with: changes)
        }
    }

    /// The item's secret, or nil when there is no such item.
    public func secret<Item: PasswordItem>(for item: Item, accessGroup: String? = nil) throws(KeychainError) -> Data? {
        var query = Self.search(item, accessGroup: accessGroup)
        query[QueryKey.returnData] = .bool(true)
        do throws(KeychainError) {
            guard case .data(let secret)? = try copyMatching(query) else {
                throw KeychainError.decode("securityd answered a data query without data")
            }
            return secret
        } catch .itemNotFound {
            return nil
        }
    }

    /// The item's attributes, or nil when there is no such item.
    public func attributes<Item: PasswordItem>(of item: Item, accessGroup: String? = nil) throws(KeychainError) -> StoredItem<Item>? {
        try items(Item.self, matching: item.namingAttributes, accessGroup: accessGroup).first
    }

    /// Every item of a kind this process may see, optionally narrowed by attributes (Apple's
    /// four-letter names, for example `["svce": .string("api.example.com")]`).
    public func items<Item: PasswordItem>(
        _ kind: Item.Type, matching attributes: [String: KeychainValue] = [:], accessGroup: String? = nil
    ) throws(KeychainError) -> [StoredItem<Item>] {
        var query = Self.scope(kind, accessGroup: accessGroup).merging(attributes) { $1 }
        query[QueryKey.returnAttributes] = .bool(true)
        query[QueryKey.returnPersistentRef] = .bool(true)
        query[QueryKey.matchLimit] = .string(QueryKey.matchLimitAll)
        do throws(KeychainError) {
            guard case .array(let found)? = try copyMatching(query) else {
                throw KeychainError.decode("securityd answered a list query without a list")
            }
            return found.compactMap { if case .dictionary(let attributes) = $0 { StoredItem(attributes) } else { nil } }
        } catch .itemNotFound {
            return []
        }
    }

    /// Changes the item's secret and/or attributes (nil ones stay as they are).
    ///
    /// - Throws: `KeychainError.itemNotFound` when there is no such item.
    public func update<Item: PasswordItem>(_ item: Item, secret: Data? = nil, attributes: ItemAttributes = ItemAttributes()) throws(KeychainError) {
        var changes = attributes.dictionary
        changes[QueryKey.valueData] = secret.map { .data($0) }
        try update(Self.search(item, accessGroup: nil), with: changes)
    }

    /// Deletes the item; false when there was none.
    @discardableResult
    public func delete<Item: PasswordItem>(_ item: Item, accessGroup: String? = nil) throws(KeychainError) -> Bool {
        do {
            try delete(Self.search(item, accessGroup: accessGroup))
            return true
        } catch .itemNotFound {
            return false
        }
    }

    /// Deletes every item of a kind this process may see (in `accessGroup` when given).
    public func deleteAll<Item: PasswordItem>(_ kind: Item.Type, accessGroup: String? = nil) throws(KeychainError) {
        do {
            try delete(Self.scope(kind, accessGroup: accessGroup))
        } catch .itemNotFound {}
    }

    private static func query<Item: PasswordItem>(_ item: Item) -> [String: KeychainValue] {
        item.namingAttributes.merging([QueryKey.itemClass: .string(Item.itemClass.rawValue)]) { $1 }
    }

    /// Every item of a kind, local or synchronizable, in `accessGroup` or any of the caller's.
    private static func scope<Item: PasswordItem>(_ kind: Item.Type, accessGroup: String?) -> [String: KeychainValue] {
        var query: [String: KeychainValue] = [
            QueryKey.itemClass: .string(Item.itemClass.rawValue),
            ItemSchema.Name.synchronizable: .string(QueryKey.synchronizableAny),
        ]
        query[ItemSchema.Name.accessGroup] = accessGroup.map { .string($0) }
        return query
    }

    private static func search<Item: PasswordItem>(_ item: Item, accessGroup: String?) -> [String: KeychainValue] {
        scope(Item.self, accessGroup: accessGroup).merging(item.namingAttributes) { $1 }
    }
}

// MARK: - async

extension Keychain {
    /// ``add(_:for:attributes:)``, off the cooperative thread pool.
    public func add<Item: PasswordItem>(_ secret: Data, for item: Item, attributes: ItemAttributes = ItemAttributes()) async throws(KeychainError) {
        try await Self.offload { () throws(KeychainError) in try self.add(secret, for: item, attributes: attributes) }
    }

    /// ``set(_:for:attributes:)``, off the cooperative thread pool.
    public func set<Item: PasswordItem>(_ secret: Data, for item: Item, attributes: ItemAttributes = ItemAttributes()) async throws(KeychainError) {
        try await Self.offload { () throws(KeychainError) in try self.set(secret, for: item, attributes: attributes) }
    }

    /// ``secret(for:accessGroup:)``, off the cooperative thread pool.
    public func secret<Item: PasswordItem>(for item: Item, accessGroup: String? = nil) async throws(KeychainError) -> Data? {
        try await Self.offload { () throws(KeychainError) in try self.secret(for: item, accessGroup: accessGroup) }
    }

    /// ``attributes(of:accessGroup:)``, off the cooperative thread pool.
    public func attributes<Item: PasswordItem>(of item: Item, accessGroup: String? = nil) async throws(KeychainError) -> StoredItem<Item>? {
        try await Self.offload { () throws(KeychainError) in try self.attributes(of: item, accessGroup: accessGroup) }
    }

    /// ``items(_:matching:accessGroup:)``, off the cooperative thread pool.
    public func items<Item: PasswordItem>(
        _ kind: Item.Type, matching attributes: [String: KeychainValue] = [:], accessGroup: String? = nil
    ) async throws(KeychainError) -> [StoredItem<Item>] {
        try await Self.offload { () throws(KeychainError) in try self.items(kind, matching: attributes, accessGroup: accessGroup) }
    }

    /// ``update(_:secret:attributes:)``, off the cooperative thread pool.
    public func update<Item: PasswordItem>(_ item: Item, secret: Data? = nil, attributes: ItemAttributes = ItemAttributes()) async throws(KeychainError) {
        try await Self.offload { () throws(KeychainError) in try self.update(item, secret: secret, attributes: attributes) }
    }

    /// ``delete(_:accessGroup:)``, off the cooperative thread pool.
    @discardableResult
    public func delete<Item: PasswordItem>(_ item: Item, accessGroup: String? = nil) async throws(KeychainError) -> Bool {
        try await Self.offload { () throws(KeychainError) in try self.delete(item, accessGroup: accessGroup) }
    }

    /// ``deleteAll(_:accessGroup:)``, off the cooperative thread pool.
    public func deleteAll<Item: PasswordItem>(_ kind: Item.Type, accessGroup: String? = nil) async throws(KeychainError) {
        try await Self.offload { () throws(KeychainError) in try self.deleteAll(kind, accessGroup: accessGroup) }
    }
}
