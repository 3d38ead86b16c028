import FoundationEssentials
import GRDB
import KeychainModel
public import KeychainCallers

/// The freedesktop Secret Service's items: generic passwords of one access group (the
/// caller's scope) whose arbitrary attributes are found through keyed tokens in
/// `genp_attribute` — one row per attribute, indexed — so an equality search reads and
/// decrypts only the rows that carry every token it asks for.
extension KeychainStore {
    /// The protection class of every Secret Service item: usable from the first unlock after
    /// boot until the machine restarts, as a login keyring is for the session.
    public static let secretServiceProtection = ProtectionClass.afterFirstUnlock

    private func attributeToken(_ name: String, _ value: String) -> Int64 {
        var pair = ByteWriter()
        pair.appendLengthPrefixed(name)
        pair.appendLengthPrefixed(value)
        return blindIndex.token(.genericPassword, attribute: "secret-service attribute", value: .data(pair.data))
    }

    /// Whether Secret Service items cannot be read now (the keychain has not been unlocked
    /// since the machine started).
    public func secretServiceIsLocked() -> Bool {
        do {
            _ = try keybag.metadataKey(for: Self.secretServiceProtection)
            return false
        } catch {
            return true
        }
    }

    /// The items of `groups` whose attributes include every pair of `attributes`, in the
    /// order they were created. Rows that are damaged are left out.
    public func secretServiceItems(in reach: AccessGroups, matching attributes: [String: String]) throws -> [SecretServiceItem] {
        let groups = reach.groups
        guard !groups.isEmpty else { return [] }
        let keys = OperationKeys(keybag)
        return try readStatement { db in
            try candidates(in: groups, matching: attributes, id: nil, db: db).compactMap { stored in
                try? secretServiceItem(stored, keys: keys, matching: attributes)
            }
        }
    }

    /// The identifiers of the items of `groups` whose tokens match `attributes`, read from
    /// the plaintext columns alone: what a search can say while the keychain is locked
    /// (tokens are 64 bits, so a match is confirmed only once the row can be decrypted).
    public func secretServiceItemIDs(in reach: AccessGroups, matching attributes: [String: String]) throws -> [(id: String, group: String)] {
        let groups = reach.groups
        guard !groups.isEmpty else { return [] }
        return try readStatement { db in
            try candidates(in: groups, matching: attributes, id: nil, db: db).map {
                (SecretServiceItem.id(of: $0.identity.uuid), $0.identity.accessGroup)
            }
        }
    }

    /// Whether item `id` is one of `groups`' (without decrypting it).
    public func secretServiceItemExists(id: String, in reach: AccessGroups) throws -> Bool {
        let groups = reach.groups
        guard SecretServiceItem.uuid(ofID: id) != nil, !groups.isEmpty else { return false }
        return try readStatement { db in try !candidates(in: groups, matching: [:], id: id, db: db).isEmpty }
    }

    /// The item `id` of one of `groups`, or nil.
    public func secretServiceItem(id: String, in reach: AccessGroups) throws -> SecretServiceItem? {
        let groups = reach.groups
        return try secretServiceRow(id: id, in: groups).map { $0.1 }
    }

    /// The secret of item `id` of one of `groups`.
    ///
    /// - Throws: `errSecItemNotFound` when there is none, the keybag's error when locked.
    public func secretServiceSecret(id: String, in reach: AccessGroups) throws -> (SecretBytes, SecretServiceItem) {
        let groups = reach.groups
        guard let (stored, item) = try secretServiceRow(id: id, in: groups) else { throw KeychainError.itemNotFound }
        let (secret, _) = try openSecret(stored)
        return (secret ?? SecretBytes([]), item)
    }

    /// Stores a new item in `reach`'s default group, or with `replace` overwrites the label, secret and
    /// content type of the first item there whose attributes are exactly `attributes`
    /// (the Secret Service's `CreateItem`).
    ///
    /// - Returns: the item, and whether it is new.
    ///
    /// - Parameter dates: the new item's creation and modification dates (an import keeps
    ///   the original's); now when nil.
    public func createSecretServiceItem(
        in reach: AccessGroups, label: String, attributes: [String: String], secret: SecretBytes, contentType: String, replace: Bool,
        dates: (created: Date, modified: Date)? = nil
    ) throws -> (SecretServiceItem, created: Bool) {
        let group = try reach.defaultGroup()
        try Self.checkSecretServiceAttributes(attributes)
        let keys = OperationKeys(keybag)
        if replace, let existing = try secretServiceItems(in: reach, matching: attributes).first(where: { $0.attributes == attributes }) {
            let updated = try updateSecretServiceItem(
                id: existing.id, in: reach, label: label, attributes: nil, secret: secret, contentType: contentType)
            return (updated, false)
        }
        let now = Date()
        let item = SecretServiceItem(
            id: SecretServiceItem.id(of: UUID()), label: label, attributes: attributes, contentType: contentType,
            created: dates?.created ?? now, modified: dates?.modified ?? now, accessGroup: group)
        let stored = keychainItem(item, secret: secret)
        let sealed = try seal(stored, keys: keys)
        try write { db in
            try claimPrimaryKey(sealed.identity.primaryKeyToken, of: .genericPassword, excluding: nil, in: db)
            try insert(sealed, in: db)
        }
        return (item, true)
    }

    /// Changes an item's label, attributes or secret (each when given), and its modification date.
    ///
    /// - Throws: `errSecItemNotFound` when `id` is not an item of `groups`.
    @discardableResult
    public func updateSecretServiceItem(
        id: String, in reach: AccessGroups, label: String? = nil, attributes: [String: String]? = nil,
        secret newSecret: SecretBytes? = nil, contentType: String? = nil
    ) throws -> SecretServiceItem {
        let groups = reach.groups
        if let attributes { try Self.checkSecretServiceAttributes(attributes) }
        let keys = OperationKeys(keybag)
        guard let (stored, current) = try secretServiceRow(id: id, in: groups) else { throw KeychainError.itemNotFound }
        var item = current
        if let label { item.label = label }
        if let attributes { item.attributes = attributes }
        if let contentType { item.contentType = contentType }
        item.modified = Date()
        let secret: SecretBytes
        if let newSecret {
            secret = newSecret
        } else {
            secret = try openSecret(stored).0 ?? SecretBytes([])
        }
        let keychainItem = keychainItem(item, secret: secret)
        let sealed = try seal(keychainItem, keys: keys)
        try write { db in
            try claimPrimaryKey(sealed.identity.primaryKeyToken, of: .genericPassword, excluding: stored.rowID, in: db)
            try replace(rowID: stored.rowID, with: sealed, in: db)
            if Self.syncs(stored.identity), !Self.syncs(keychainItem) {
                try journal(.tombstone, uuid: stored.identity.uuid, of: .genericPassword, at: Date(), in: db)
            }
        }
        return item
    }

    /// Deletes item `id` of one of `groups`.
    ///
    /// - Throws: `errSecItemNotFound` when there is none.
    public func deleteSecretServiceItem(id: String, in reach: AccessGroups) throws {
        let groups = reach.groups
        guard let (stored, _) = try secretServiceRow(id: id, in: groups) else { throw KeychainError.itemNotFound }
        // The trigger on genp removes the row's attribute tokens.
        try write { db in
            try deleteRow(stored.rowID, of: .genericPassword, in: db)
            if Self.syncs(stored.identity) { try journal(.tombstone, uuid: stored.identity.uuid, of: .genericPassword, at: Date(), in: db) }
        }
    }

    // MARK: - Rows

    private func secretServiceRow(id: String, in groups: [String]) throws -> (StoredRow, SecretServiceItem)? {
        guard SecretServiceItem.uuid(ofID: id) != nil, !groups.isEmpty else { return nil }
        let keys = OperationKeys(keybag)
        return try readStatement { db in
            for stored in try candidates(in: groups, matching: [:], id: id, db: db) {
                if let item = try? secretServiceItem(stored, keys: keys, matching: [:]), item.id == id {
                    return (stored, item)
                }
            }
            return nil
        }
    }

    /// Rows of `groups` carrying the marker and every attribute's token (and the account
    /// token of `id`): the indexes answer, nothing is decrypted.
    private func candidates(in groups: [String], matching attributes: [String: String], id: String?, db: Database) throws -> [StoredRow] {
        let (sql, arguments) = try candidateStatement(in: groups, matching: attributes, id: id, db: db)
        var rows: [StoredRow] = []
        try statements.cachedSelect(sql, in: db).forEachRow(binding: arguments) { row in
            // A row whose plaintext columns are not of our format is left out, as a row whose
            // blobs fail authentication is.
            if let stored = try? StoredRow(row, itemClass: .genericPassword) { rows.append(stored) }
            return true
        }
        return rows
    }

    /// SQLite's plan for a Secret Service search, or for item `id` (the tests check that it
    /// uses the indexes).
    public func secretServiceQueryPlan(in reach: AccessGroups, matching attributes: [String: String], id: String? = nil) throws -> [String] {
        let groups = reach.groups
        return try read { db in
            let (sql, arguments) = try candidateStatement(in: groups, matching: attributes, id: id, db: db)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments.map(Optional.some)))
                .map { $0["detail"] as String }
        }
    }

    /// One token's list drives the search — the item's own row for `id`, else the attribute
    /// that fewest items share — and every other token is probed per row through
    /// `genp_attribute`'s primary key (token, item). Were each an `IN (SELECT …)`, SQLite would
    /// build each list whole per statement: an attribute every item shares (one application's
    /// "service"; the marker, on every lookup of an item by its path) would cost a walk over all.
    private func candidateStatement(
        in groups: [String], matching attributes: [String: String], id: String?, db: Database
    ) throws -> (String, [any DatabaseValueConvertible]) {
        // Only Secret Service items have attribute rows: the marker is needed only when no
        // attribute is named.
        var tokens = attributes.isEmpty ? [secretServiceMarker] : attributes.sorted(by: { $0.key < $1.key }).map { attributeToken($0.key, $0.value) }
        var arguments: [any DatabaseValueConvertible] = []
        arguments.reserveCapacity(groups.count + tokens.count + 1)
        for group in groups { arguments.append(group) }
        if let id {
            arguments.append(SecretServiceItem.uuid(ofID: id)?.storedBytes ?? Data())
        } else {
            if tokens.count > 1 { tokens = try bySelectivity(tokens, db: db) }
            arguments.append(tokens.removeFirst())
        }
        for token in tokens { arguments.append(token) }
        let shape = SecretServiceShape.candidates(groups: groups.count, byID: id != nil, probes: tokens.count)
        return (statements.secretServiceSQL(for: shape), arguments)
    }

    /// `tokens`, the one fewest rows carry first: each counted through the primary key, up to a
    /// bound (beyond it, a list is long whichever it is), all in one statement.
    private func bySelectivity(_ tokens: [Int64], db: Database) throws -> [Int64] {
        let statement = try statements.cachedSelect(statements.secretServiceSQL(for: .selectivity(tokens: tokens.count)), in: db)
        var counted = Array(repeating: 0, count: tokens.count)
        try statement.forEachRow(binding: tokens) { row in
            if let position = row.int64(0).map(Int.init), counted.indices.contains(position), let count = row.int64(1) {
                counted[position] = Int(count)
            }
            return true
        }
        return tokens.indices.sorted { counted[$0] < counted[$1] }.map { tokens[$0] }
    }

    /// A row's item, confirmed to carry `attributes` (tokens are 64 bits: a collision is
    /// possible, if unlikely).
    private func secretServiceItem(_ stored: StoredRow, keys: OperationKeys, matching attributes: [String: String]) throws -> SecretServiceItem? {
        let item = try openMetadata(stored, keys: keys)
        guard case .data(let blob)? = item.attributes[SecretServiceItem.attributeName] else { return nil }
        let id = SecretServiceItem.id(of: stored.identity.uuid)
        let (itemAttributes, contentType) = try SecretServiceItem.decode(blob)
        guard attributes.allSatisfy({ itemAttributes[$0.key] == $0.value }) else { return nil }
        let label = item.attributes[SecName.kSecAttrLabel]?.stringValue ?? ""
        return SecretServiceItem(
            id: id, label: label, attributes: itemAttributes, contentType: contentType,
            created: item.attributes[ItemSchema.Name.creationDate]?.dateValue ?? Date(timeIntervalSince1970: 0),
            modified: item.attributes[ItemSchema.Name.modificationDate]?.dateValue ?? Date(timeIntervalSince1970: 0),
            accessGroup: stored.identity.accessGroup)
    }

    /// The generic password that keeps `item`: the account is its id, the service and label
    /// its label (so `security find-generic-password -s LABEL -w` reads it).
    private func keychainItem(_ item: SecretServiceItem, secret: SecretBytes) -> KeychainItem {
        let attributes: [String: KeychainValue] = [
            SecName.kSecAttrAccount: .string(item.id),
            SecName.kSecAttrService: .string(item.label),
            SecName.kSecAttrLabel: .string(item.label),
            SecretServiceItem.attributeName: .data(SecretServiceItem.encode(attributes: item.attributes, contentType: item.contentType)),
            ItemSchema.Name.creationDate: .date(item.created),
            ItemSchema.Name.modificationDate: .date(item.modified),
        ]
        return KeychainItem(
            itemClass: .genericPassword, attributes: attributes, accessGroup: item.accessGroup,
            protection: Self.secretServiceProtection, synchronizable: false, tombstone: false,
            persistentReference: PersistentReference(itemClass: .genericPassword, uuid: SecretServiceItem.uuid(ofID: item.id) ?? UUID()),
            data: secret)
    }

    /// The `genp_attribute` tokens of a generic password the Secret Service made (its
    /// marker and one per attribute), whichever way it is written (added, updated, restored).
    func secretServiceTokens(of item: KeychainItem) throws -> [Int64]? {
        guard item.itemClass == .genericPassword, !item.tombstone,
            case .data(let blob)? = item.attributes[SecretServiceItem.attributeName]
        else { return nil }
        let (attributes, _) = try SecretServiceItem.decode(blob)
        return [secretServiceMarker] + attributes.map { attributeToken($0.key, $0.value) }
    }

    func writeAttributeTokens(_ tokens: [Int64], of rowID: Int64, in db: Database) throws {
        let insert = try statements.statement("INSERT OR IGNORE INTO genp_attribute (token, item) VALUES (?, ?)", in: db)
        for token in tokens { try insert.execute(arguments: [token, rowID]) }
    }

    /// Refuses more attributes, or longer ones, than an item may have (errSecParam).
    public static func checkSecretServiceAttributes(_ attributes: [String: String]) throws {
        guard attributes.count <= SecretServiceItem.maximumAttributeCount else {
            throw KeychainError.param("an item may have at most \(SecretServiceItem.maximumAttributeCount) attributes")
        }
        for (name, value) in attributes
        where name.utf8.count > SecretServiceItem.maximumAttributeSize || value.utf8.count > SecretServiceItem.maximumAttributeSize {
            throw KeychainError.param("an attribute's name or value is longer than \(SecretServiceItem.maximumAttributeSize) bytes")
        }
    }
}
